import { stat } from 'node:fs/promises';
import { Disposable, toDisposable } from '../lifecycle';
import * as vscode from 'vscode';
import { EvaluationSession, journalPath } from '../../core';
import { makeRef } from './evaluationRef';
import type { EvaluationRef } from './evaluationRef';
import type { SandboxController } from './sandboxController';
import type { Settings } from '../settings/settingsModel';

export type { EvaluationRef } from './evaluationRef';

/** The evaluations shown in this window (configured ones and the sandbox's) and their sessions. */
export class EvaluationRegistry extends Disposable {
  private refsList: EvaluationRef[] = [];
  private readonly sessions = new Map<string, EvaluationSession>();
  private readonly unsubscribe = new Map<string, () => void>();
  private readonly listEmitter = this._register(new vscode.EventEmitter<void>());
  private readonly sessionEmitter = this._register(new vscode.EventEmitter<EvaluationRef>());
  /** What shows an evaluation's traces (an expanded tree node, Run Details, a review): see showsRows. */
  private readonly rowViews = new Set<(refId: string) => boolean>();
  readonly onDidChangeList = this.listEmitter.event;
  readonly onDidChangeSession = this.sessionEmitter.event;

  private stateDir: string;

  constructor(
    private readonly settings: () => Settings,
    private readonly sandbox: SandboxController,
    /** Settles once journals of older versions are moved into the state folder: sessions load after it. */
    private readonly ready: Promise<unknown>,
  ) {
    super();
    this.stateDir = settings().stateDir;
    this._register(
      toDisposable(() => {
        for (const session of this.sessions.values()) session.cancel(true);
        for (const off of this.unsubscribe.values()) off();
      }),
    );
  }

  get refs(): readonly EvaluationRef[] {
    return this.refsList;
  }

  find(id: string): EvaluationRef | undefined {
    return this.refsList.find((r) => r.id === id);
  }

  refresh(): void {
    const s = this.settings();
    if (s.stateDir !== this.stateDir) {
      // Another history: every session reads its journal from the new folder.
      this.stateDir = s.stateDir;
      this.forgetSessions();
    }
    const refs: EvaluationRef[] = [];
    const sandbox = this.sandbox.place;
    if (sandbox) {
      for (const e of sandbox.evaluations) {
        refs.push(makeRef(sandbox.baseUrl, e.evaluationId, e.kind, `Sandbox ${e.kind} ${e.evaluationId}`, 'sandbox'));
      }
    }
    for (const e of s.evaluations) {
      refs.push(makeRef(s.baseUrl, e.evaluationId, e.kind, e.label ?? `${capitalise(e.kind)} evaluation ${e.evaluationId}`, 'configured'));
    }
    this.refsList = refs.filter((r, i) => refs.findIndex((o) => o.id === r.id) === i);
    void vscode.commands.executeCommand('setContext', 'evalRunner.evaluationCount', this.refsList.length);
    this.listEmitter.fire();
  }

  /** Where an evaluation's journal is, without opening a session for it. */
  journalFileOf(ref: EvaluationRef): string {
    return journalPath(this.stateDir, ref.key);
  }

  /**
   * Something this window shows needs an evaluation's traces, not only its counts, while `shows(refId)` says so: a
   * run followed in another process is read from its journal only then (its counts come with its progress).
   */
  showsRows(shows: (refId: string) => boolean): vscode.Disposable {
    this.rowViews.add(shows);
    return toDisposable(() => this.rowViews.delete(shows));
  }

  private rowsShown(refId: string): boolean {
    for (const shows of this.rowViews) if (shows(refId)) return true;
    return false;
  }

  session(ref: EvaluationRef): EvaluationSession {
    const existing = this.sessions.get(ref.id);
    if (existing) return existing;
    const session = new EvaluationSession(ref.key, this.stateDir);
    this.sessions.set(ref.id, session);
    const off = session.onDidChange(() => this.sessionEmitter.fire(ref));
    const unwatch = watchJournal(session, () => this.rowsShown(ref.id));
    this.unsubscribe.set(ref.id, () => {
      off();
      unwatch();
    });
    void this.ready.then(() => session.load()).catch(() => undefined);
    return session;
  }

  private forgetSessions(): void {
    for (const off of this.unsubscribe.values()) off();
    this.sessions.clear();
    this.unsubscribe.clear();
  }
}

/**
 * Follows a journal that another process writes (a CLI run, another window): when it changes and no run of
 * this window holds it, the session reads it again, so the tree and Run Details show that run's progress.
 * A stat a second, not an fs watcher: the file may not exist yet, and watchers differ between platforms.
 *
 * A run this window follows (its runner's progress comes over the socket) is read only while something shown needs
 * its traces (`rowsShown`): its counts come with its progress, and the window reads it once when it ends, from the
 * index the runner leaves (runs.ts). Read each second, a 100,000-trace run's records cost the extension host 1.4 s of
 * CPU, on a machine whose two cores the run already takes. Each read parses every record since the last, so a
 * longer wait only makes each read longer: the saving is the part of the run left to that index, and each read's
 * redraw. So the wait is a second while the journal is small or a read costs little (a small run: its rows follow
 * it) or the run's list is still coming in, FOLLOWED_READ_MS once it costs more, never a multiple of the last read's
 * cost, which would grow with each wait.
 */
function watchJournal(session: EvaluationSession, rowsShown: () => boolean): () => void {
  const path = session.journalFile;
  let reading = false;
  // A 100k-trace journal takes a good part of a second to read: the next read waits ten times as long as the
  // last one took (its wait for its turn apart: a long Fetch Prompts is not a slow read), so following another
  // process's run never costs this window more than a tenth of a core.
  let notBefore = 0;
  // A followed run's reads keep their own pace, so the run's end leaves the pace above as it was.
  let followedReadAt = 0;
  let followedWait = 0;
  // Compared with what was last read (not with the last look), so a change seen while waiting is read later.
  let seen = '';
  const look = () => {
    if (session.runsHere || reading) return;
    const followed = session.isRunning;
    // While the run has traces this window has not read (its list is coming in), each second: see listUnread.
    const due = followed ? followedReadAt + (listUnread(session) ? 1000 : followedWait) : notBefore;
    if (Date.now() < due || (followed && !rowsShown())) return;
    reading = true;
    void stat(path)
      .then(async (now) => {
        const key = `${now.mtimeMs}:${now.size}`;
        if (key === seen) return;
        seen = key;
        await session.load();
        if (!followed) {
          notBefore = Date.now() + 10 * session.lastReadMs;
          return;
        }
        followedReadAt = Date.now();
        followedWait = now.size < SMALL_JOURNAL_BYTES || session.lastReadMs < CHEAP_READ_MS ? 1000 : FOLLOWED_READ_MS;
      })
      .catch(() => undefined)
      .finally(() => {
        reading = false;
      });
  };
  const timer = setInterval(look, 1000);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * The followed run has traces this window has not read yet (its prompt list is still coming in): read again in a
 * second, so the read that completes the list carries a second of the run's answers, not five (Run Details asks the
 * runner for its rows once it knows the list, and reads no more).
 */
function listUnread(session: EvaluationSession): boolean {
  return (session.lastProgress?.total ?? 0) > session.store.traces.size;
}

/** How often a window reads the journal of a run it follows while it shows that run's traces, once reads cost. */
const FOLLOWED_READ_MS = 5000;
/** A read of a followed run's journal this short is repeated each second: 2 % of a core at most. */
const CHEAP_READ_MS = 20;
/** A journal this small is read each second however long its read took (a loaded machine slows any read). */
const SMALL_JOURNAL_BYTES = 1024 * 1024;

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
