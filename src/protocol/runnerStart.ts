// Starting a runner process for a journal: the editor's runs (src/extension/runs/runnerClient.ts) and a run started
// from outside any window (an agent's tool, src/tools) alike. It is detached, so the run goes on when its starter
// ends and every window, `status` and `list` see it. The starter sends the run (secrets cross the socket only); cancel
// reaches a run going on through the same checked connection.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { spawnErrorText } from '../core';
import { journalFolderProblem, reachRun, withRunner } from './runnerConnection';
import { liveRunner, runnerFailurePath } from './runnerFiles';
import type { RunnerFile } from './runnerFiles';
import { cancel, finished, progress, start, state } from './runnerProtocol';
import type { RunnerState, StartParams } from './runnerProtocol';

// A fresh runner says where it listens in tens of milliseconds.
const RUNNER_START_MS = 15_000;
// A run lists its prompts within a few seconds, or fails to; a long listing is told as going on.
const START_SETTLE_MS = 8_000;

/**
 * Spawns `runnerScript` (dist/runner.js) for this journal with this process's Node (or Electron as Node, by `env`),
 * detached, and waits for its runner file: the runner's own, from a folder of this user's alone. No secret is in its
 * argv; `env` is the caller's to make secret-free.
 */
export async function spawnRunner(runnerScript: string, journalFile: string, env: NodeJS.ProcessEnv): Promise<RunnerFile> {
  // The token crosses the socket only; an editor started from a shell that set it must not hand it to a target.
  const { EVAL_RUNNER_TOKEN: _token, ...withoutToken } = env;
  const child = spawn(process.execPath, [runnerScript, journalFile], { detached: true, stdio: 'ignore', windowsHide: true, env: withoutToken });
  child.unref();
  const exited = new Promise<never>((_resolve, reject) => {
    child.once('exit', (code) => reject(new Error(readFailure(journalFile) ?? `The runner process ended at once (exit code ${code}).`)));
    // The runtime gone or refused (an editor update under way, a policy): said in words, not `spawn … ENOENT`.
    child.once('error', (error) => reject(new Error(`The runner process could not start: ${spawnErrorText(error, process.execPath)}`)));
  });
  exited.catch(() => undefined);
  const file = await Promise.race([runnerFileOf(journalFile, child.pid), exited]);
  const folder = journalFolderProblem(journalFile);
  if (folder) throw folder;
  return file;
}

/**
 * Starts a runner for this journal, sends it the run and lets go once the run has its prompts (or ended, or a few
 * seconds passed): the run's state then, so that a run that could not start (an unknown evaluation, a refused token)
 * is told to its starter rather than found missing later. `env` is the caller's environment less the token and the variables the run reads secrets from (its
 * target's own code gets the rest).
 */
export async function startDetachedRun(runnerScript: string, journalFile: string, params: StartParams, env: NodeJS.ProcessEnv): Promise<{ pid: number; state: RunnerState }> {
  const file = await spawnRunner(runnerScript, journalFile, env);
  const runState = await withRunner(file, async (connection) => {
    const settled = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, START_SETTLE_MS);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      connection.onNotification(finished, done);
      // Done: its end (the finished notification) follows, and is waited for.
      connection.onNotification(progress, (p) => {
        if (p.phase === 'waiting' || p.phase === 'running') done();
      });
    });
    await connection.sendRequest(start, params);
    await settled;
    return connection.sendRequest(state);
  });
  return { pid: file.pid, state: runState };
}

/** Cancels the run of this journal, wherever it was started (a runner or a CLI run): hard aborts calls in flight. */
export async function cancelRun(journalFile: string, hard: boolean): Promise<void> {
  await reachRun(journalFile, (connection) => connection.sendRequest(cancel, { hard }));
}

/** What a runner that could not start said (it has no terminal). */
function readFailure(journalFile: string): string | undefined {
  const path = runnerFailurePath(journalFile);
  try {
    const text = readFileSync(path, 'utf8').slice(0, 2000);
    rmSync(path, { force: true });
    return text;
  } catch {
    return undefined;
  }
}

/** Waits for the runner to say where it listens. */
async function runnerFileOf(journalFile: string, pid: number | undefined): Promise<RunnerFile> {
  const deadline = Date.now() + RUNNER_START_MS;
  for (;;) {
    const file = liveRunner(journalFile);
    if (file && file.pid === pid) return file;
    if (Date.now() > deadline) throw new Error(`The runner process did not start within ${RUNNER_START_MS / 1000} s.`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
