// The window and the runner prove themselves to each other before anything else crosses the socket. Both know the
// secret of the owner-only runner file; each proves it with an HMAC over both sides' fresh nonces and its own role,
// so the secret never crosses, a proof is good for one connection only, and one side's proof is never the other's.
// Whoever listens on a stale socket path, or connects to a live runner, gets no secret and nothing served.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { MessageConnection } from 'vscode-jsonrpc';
import { otherVersionText, RUNNER_PROTOCOL_VERSION } from './runnerFiles';

// Here for the callers that speak the handshake; it lives with the runner file, which needs it without JSON-RPC.
export { otherVersionText };
import type { RunnerFile } from './runnerFiles';
import { hello } from './runnerProtocol';
import type { HelloResult } from './runnerTypes';

type Role = 'runner' | 'window';
type HelloAnswer = HelloResult;

const NONCE = /^[0-9a-f]{64}$/;

function newNonce(): string {
  return randomBytes(32).toString('hex');
}

/** One side's proof: an HMAC keyed by the runner file's secret over its role and both nonces (exported for the tests). */
export function proofOf(secret: string, role: Role, windowNonce: string, runnerNonce: string): string {
  return createHmac('sha256', Buffer.from(secret, 'hex')).update(`eval-runner/${RUNNER_PROTOCOL_VERSION}/${role}/${windowNonce}/${runnerNonce}`).digest('hex');
}

function proves(given: unknown, expected: string): boolean {
  return typeof given === 'string' && NONCE.test(given) && timingSafeEqual(Buffer.from(given, 'hex'), Buffer.from(expected, 'hex'));
}

/**
 * The runner's side, one per connection. Anything but hello and prove is served only once the window proved
 * itself; a wrong step closes the connection (`refuse`).
 */
export class RunnerHandshake {
  private nonces: { window: string; runner: string } | undefined;
  private ok = false;

  constructor(
    private readonly secret: string,
    private readonly refuse: () => void,
  ) {}

  get proven(): boolean {
    return this.ok;
  }

  /** The window's nonce: answered with the runner's own and its proof. Once per connection. */
  hello({ version, nonce }: { version?: unknown; nonce?: unknown }): HelloAnswer {
    if (this.nonces || version !== RUNNER_PROTOCOL_VERSION || typeof nonce !== 'string' || !NONCE.test(nonce)) this.fail('Not a window of this runner.');
    this.nonces = { window: nonce, runner: newNonce() };
    return { version: RUNNER_PROTOCOL_VERSION, pid: process.pid, nonce: this.nonces.runner, proof: proofOf(this.secret, 'runner', this.nonces.window, this.nonces.runner) };
  }

  /** The window's proof: from here on this connection is the owner's. */
  prove({ proof }: { proof?: unknown }): void {
    const n = this.nonces;
    if (this.ok || !n || !proves(proof, proofOf(this.secret, 'window', n.window, n.runner))) this.fail('Not the owner.');
    this.ok = true;
  }

  /** Before anything is served: the window proved itself, or the connection closes. */
  require(): void {
    if (!this.ok) this.fail('Prove first.');
  }

  private fail(message: string): never {
    this.refuse();
    throw new Error(message);
  }
}

/** The runner's hello said another protocol version: the window attaches to nothing, and says why. */
export class RunnerVersionError extends Error {
  override name = 'RunnerVersionError';

  constructor(
    readonly pid: number,
    readonly version: unknown,
  ) {
    super(otherVersionText(pid, version));
  }
}

/**
 * The window's side: sends only its nonce, and returns once the runner proved it knows the file's secret, with the
 * window's own proof to send (prove). Throws otherwise: then nothing else may be sent on this connection, and
 * nothing the other end asks may be answered.
 */
export async function windowHandshake(connection: MessageConnection, file: RunnerFile): Promise<string> {
  const windowNonce = newNonce();
  const answer = (await connection.sendRequest(hello, { version: RUNNER_PROTOCOL_VERSION, nonce: windowNonce })) as Partial<HelloAnswer> | null;
  // Said before the proof is looked at: a runner of another version cannot prove itself in this one's terms.
  if (answer && answer.version !== RUNNER_PROTOCOL_VERSION) throw new RunnerVersionError(file.pid, answer.version);
  const runnerNonce = answer?.nonce;
  if (answer?.pid !== file.pid || typeof runnerNonce !== 'string' || !NONCE.test(runnerNonce) || !proves(answer.proof, proofOf(file.secret, 'runner', windowNonce, runnerNonce))) {
    throw new Error(`the process listening at the runner's socket did not prove it is the runner (pid ${file.pid}) that wrote the runner file; nothing else was sent to it`);
  }
  return proofOf(file.secret, 'window', windowNonce, runnerNonce);
}
