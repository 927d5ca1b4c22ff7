import { EXIT, UsageError } from './exitCodes';
import { sandboxCommand } from './sandboxCommand';

const HELP = `Usage: eval-runner <command> [options]

Commands:
  sandbox     start the local reference service
Run "eval-runner <command> --help" for a command's options.
`;

type Command = (argv: string[], out: NodeJS.WritableStream) => Promise<number>;

const COMMANDS: Readonly<Record<string, Command>> = {
  sandbox: sandboxCommand,
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(HELP);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`eval-runner: unknown command "${name}".\n${HELP}`);
    return EXIT.usage;
  }
  try {
    return await command(rest, process.stdout);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`eval-runner ${name}: ${error.message}\nRun "eval-runner ${name} --help" for usage.\n`);
      return EXIT.usage;
    }
    process.stderr.write(`eval-runner ${name}: ${(error as Error).message}\n`);
    return EXIT.usage;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`eval-runner: ${String(error)}\n`);
    process.exitCode = 1;
  },
);
