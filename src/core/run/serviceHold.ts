import type { ApiClient } from '../../api/client';
import { ApiError } from '../../api/errors';
import { sleep } from '../../api/retry';

/** Why submissions are held: the service is down (an outage), or it stopped taking the token. */
export interface HoldState {
  kind: 'outage' | 'token';
  since: number;
  /** In a few words: "HTTP 502", "connection refused", "the token was rejected". */
  cause: string;
  /** When the next probe goes (outage). */
  nextTryAt: number | undefined;
}

/** A hold as the run's history keeps it. */
export interface HoldEvent {
  kind: HoldState['kind'];
  from: number;
  to: number;
  cause: string;
}

/** What the hold may do on its own: stop the run, log, ask for a new token. */
export interface HoldHost {
  /** Nothing more to wait for: the run stops for this reason. */
  giveUp(outcome: 'unreachable' | 'auth', message: string, error: unknown): void;
  log(level: 'info' | 'warn', message: string): void;
  stopping(): boolean;
}

// Probes of a service that is down: quick at first (a reply lost once costs a quarter second), then every 10 s.
const FIRST_PROBE_MS = 250;
const LONGEST_PROBE_MS = 10_000;

/** Gateway pages, refused or reset connections and time-outs: the service as a whole is away, not this request. */
export function isOutage(error: unknown): error is ApiError {
  if (!(error instanceof ApiError)) return false;
  if (error.reason === 'network' || error.reason === 'timeout') return true;
  return error.status === 502 || error.status === 503 || error.status === 504;
}

/**
 * Holds every submission of a run while the service is down or has stopped taking the token, and lets the run go
 * on answering into the journal meanwhile. In an outage one waiting submission at a time is sent again as the
 * probe, with backoff, until the service answers or the patience runs out; a rejected token waits for a new one.
 */
export class ServiceHold {
  state: HoldState | undefined;
  readonly events: HoldEvent[] = [];
  private probing = false;
  private probes = 0;
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly host: HoldHost,
    private readonly patienceMs: number,
    /** Asks for a new token (the editor); undefined: a rejected token stops the run (the CLI). */
    private readonly newClient: ((signal: AbortSignal) => Promise<ApiClient | undefined>) | undefined,
    private readonly useClient: (client: ApiClient) => void,
  ) {}

  get active(): boolean {
    return this.state !== undefined;
  }

  /** A submission found the service down: hold the others, or give up once the patience has run out. */
  down(error: ApiError): void {
    const now = Date.now();
    if (!this.state) {
      this.state = { kind: 'outage', since: now, cause: outageCause(error), nextTryAt: undefined };
      this.probes = 0;
      this.host.log('warn', `The service is unavailable (${this.state.cause}); answers are journaled and wait, and it is tried again with backoff.`);
    }
    this.probing = false;
    if (this.state.kind === 'outage' && now - this.state.since >= this.patienceMs) {
      const since = clockTime(this.state.since);
      this.host.giveUp(
        'unreachable',
        `The service has been unavailable since ${since} (${this.state.cause}), longer than the patience of ${Math.round(this.patienceMs / 1000)} s (--service-patience). The last try: ${error.message}`,
        error,
      );
    }
    this.wake();
  }

  /** The service answered (anything but an outage): release every waiting submission. */
  up(): void {
    if (!this.state || this.state.kind !== 'outage') return;
    this.end(`The service answers again after ${Math.round((Date.now() - this.state.since) / 1000)} s; the waiting answers go on.`);
  }

  /**
   * The token was rejected: with a way to ask for a new one, the run pauses until it comes (false: it did not, and
   * the run stops); without, false at once.
   */
  async tokenRejected(error: ApiError, signal: AbortSignal): Promise<boolean> {
    if (!this.newClient) return false;
    if (this.state?.kind === 'token') return this.waitForEnd(signal).then(() => this.state === undefined && !this.host.stopping());
    this.state = { kind: 'token', since: Date.now(), cause: 'the service rejected the personal access token', nextTryAt: undefined };
    this.host.log('warn', `${error.message} The run is paused: answers are journaled and wait for a new token.`);
    // The same patience as for an outage: a run nobody gives a token to does not wait for ever.
    const patience = AbortSignal.any([signal, AbortSignal.timeout(Math.max(1, this.patienceMs))]);
    const client = await this.newClient(patience).catch(() => undefined);
    if (!client || signal.aborted) {
      this.host.giveUp('auth', error.message, error);
      this.wake();
      return false;
    }
    this.useClient(client);
    this.end('A new token was set; the paused run goes on.');
    return true;
  }

  /**
   * Waits while submissions are held: resolves 'probe' when this submission is to try the service (one at a time),
   * 'go' once the hold is over, 'stop' when the run stops meanwhile.
   */
  async wait(signal: AbortSignal): Promise<'probe' | 'go' | 'stop'> {
    while (this.state) {
      if (this.host.stopping() || signal.aborted) return 'stop';
      if (this.state.kind === 'outage' && !this.probing) {
        this.probing = true;
        const delay = Math.min(LONGEST_PROBE_MS, FIRST_PROBE_MS * 2 ** this.probes++, Math.max(0, this.state.since + this.patienceMs - Date.now()));
        this.state.nextTryAt = Date.now() + delay;
        try {
          await sleep(delay, signal);
        } catch {
          this.probing = false;
          return 'stop';
        }
        return this.host.stopping() ? 'stop' : 'probe';
      }
      await this.waitForEnd(signal);
    }
    return this.host.stopping() || signal.aborted ? 'stop' : 'go';
  }

  /** The probe ended neither up nor down (cancelled): another waiting submission may probe. */
  probeEnded(): void {
    if (!this.probing) return;
    this.probing = false;
    this.wake();
  }

  /** The run ends: a hold still going on is kept in its history too, up to now (an outage that outlasted patience). */
  closeAtEnd(): void {
    const state = this.state;
    if (!state) return;
    this.events.push({ kind: state.kind, from: state.since, to: Date.now(), cause: `${state.cause}; still so when the run stopped` });
    this.state = undefined;
  }

  /** Wakes every waiting submission (the run stops: they see it). */
  release(): void {
    this.wake();
  }

  private end(message: string): void {
    const state = this.state!;
    this.events.push({ kind: state.kind, from: state.since, to: Date.now(), cause: state.cause });
    this.state = undefined;
    this.probing = false;
    this.host.log('info', message);
    this.wake();
  }

  private waitForEnd(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done);
        this.waiters.delete(done);
        resolve();
      };
      this.waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }
}

/** A time of day as every hold's words give it: 14:02:10 (24 hours, the machine's time zone). */
export function clockTime(at: number): string {
  return new Date(at).toLocaleTimeString('en-GB', { hour12: false });
}

/** "HTTP 502", "connection refused (ECONNREFUSED)", "no answer in time". */
function outageCause(error: ApiError): string {
  if (error.status !== undefined) return `HTTP ${error.status}${STATUS_WORDS[error.status] ? ` ${STATUS_WORDS[error.status]}` : ''}`;
  if (error.reason === 'timeout') return 'no answer in time';
  const code = error.transportCode;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'connection reset';
  return code ? `connection failed (${code})` : 'connection failed';
}

const STATUS_WORDS: Readonly<Record<number, string>> = { 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout' };
