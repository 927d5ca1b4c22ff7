import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Mocha from 'mocha';

// Lines reach the launcher through the workbench's console bridge, which does not apply printf formats:
// so every line is formatted here and tagged for the shim to pick out.
const TAG = '[eval-runner-test]';

class TaggedReporter extends Mocha.reporters.Base {
  constructor(runner: Mocha.Runner) {
    super(runner);
    const say = (line: string) => console.log(`${TAG} ${line}`);
    runner.on('suite', (suite) => suite.title && say(`${suite.title}`));
    runner.on('pass', (test) => say(`  ✔ ${test.title} (${test.duration ?? 0} ms)`));
    runner.on('pending', (test) => say(`  - ${test.title} (skipped)`));
    runner.on('fail', (test, error: Error) => say(`  ✗ ${test.fullTitle()}\n${error.stack ?? error.message}`));
    runner.once('end', () => say(`${this.stats.passes} passing, ${this.stats.failures} failing (${this.stats.duration ?? 0} ms)`));
  }
}

/**
 * The extensionTestsPath entry: VS Code's extension host calls run() and exits with its outcome.
 * Counts go to EVAL_RUNNER_TEST_RESULTS (the host inherits the launcher's environment) for the summary line.
 */
export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', color: false, timeout: 60_000, reporter: TaggedReporter });
  const grep = process.env.EVAL_RUNNER_TEST_GREP;
  if (grep) mocha.grep(grep);
  for (const file of readdirSync(__dirname).filter((f) => f.endsWith('.test.js')).sort()) mocha.addFile(join(__dirname, file));
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      const results = process.env.EVAL_RUNNER_TEST_RESULTS;
      if (results) writeFileSync(results, JSON.stringify(runner.stats ?? {}));
      if (failures > 0) reject(new Error(`${failures} integration test(s) failed`));
      else resolve();
    });
  });
}
