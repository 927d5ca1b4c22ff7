import { LOCAL_STATES, STATE_LABELS } from '../../core';
import type { EvaluationSession, LocalTraceState, TraceInfo } from '../../core';
import type { EvaluationRef } from './registry';

/** The tree's nodes, apart from any TreeItem: traces are grouped by state and paged, never 100k siblings. */
export type TreeNode =
  | { kind: 'evaluation'; ref: EvaluationRef }
  | { kind: 'group'; ref: EvaluationRef; state: LocalTraceState; count: number }
  | { kind: 'page'; ref: EvaluationRef; state: LocalTraceState; page: number; count: number }
  | { kind: 'trace'; ref: EvaluationRef; trace: TraceInfo };

export const PAGE_SIZE = 200;

export function nodeId(node: TreeNode): string {
  switch (node.kind) {
    case 'evaluation':
      return `e|${node.ref.id}`;
    case 'group':
      return `g|${node.ref.id}|${node.state}`;
    case 'page':
      return `p|${node.ref.id}|${node.state}|${node.page}`;
    case 'trace':
      return `t|${node.ref.id}|${node.trace.traceId}`;
  }
}

/** contextValue tokens, matched in package.json menus with `viewItem =~`. */
export function contextValue(node: TreeNode, session: EvaluationSession | undefined): string {
  switch (node.kind) {
    case 'evaluation': {
      const tokens = ['evaluation', node.ref.kind, session?.isRunning ? 'running' : 'idle', node.ref.source];
      if ((session?.store.counts.failed ?? 0) > 0) tokens.push('hasFailed');
      if ((session?.store.counts.answered ?? 0) > 0) tokens.push('hasResponded');
      return tokens.join(':');
    }
    case 'group':
      return `stateGroup:${node.state}`;
    case 'page':
      return `page:${node.state}`;
    case 'trace':
      return [`trace:${node.trace.state}`, node.trace.hasAnswer ? 'hasAnswer' : 'noAnswer', node.trace.rating ?? 'unrated'].join(':');
  }
}

export function childrenOf(node: TreeNode, session: EvaluationSession, visible: ReadonlySet<LocalTraceState>): TreeNode[] {
  if (node.kind === 'trace') return [];
  if (node.kind === 'evaluation') {
    const counts = session.store.snapshotCounts();
    return LOCAL_STATES.filter((s) => counts[s] > 0 && visible.has(s)).map((state) => ({ kind: 'group', ref: node.ref, state, count: counts[state] }));
  }
  // A group of more than a page shows pages; a page makes only its own traces (see inState).
  const total = session.store.counts[node.state];
  if (node.kind === 'group' && total > PAGE_SIZE) {
    const pages = Math.ceil(total / PAGE_SIZE);
    return Array.from({ length: pages }, (_, page) => ({
      kind: 'page' as const,
      ref: node.ref,
      state: node.state,
      page,
      count: Math.min(PAGE_SIZE, total - page * PAGE_SIZE),
    }));
  }
  const from = node.kind === 'page' ? node.page * PAGE_SIZE : 0;
  return [...session.store.inState(node.state, from, PAGE_SIZE)].map((trace) => ({ kind: 'trace', ref: node.ref, trace }));
}

/**
 * The Responded traces (answered, not submitted) under the given nodes, of the first node's evaluation, in tree
 * order and each once: a group or an evaluation gives all of them, a page its slice, a trace itself. What Approve
 * and Submit sends.
 */
export function respondedUnder(nodes: readonly TreeNode[], session: EvaluationSession): string[] {
  const ref = nodes[0]?.ref;
  const ids = new Set<string>();
  for (const node of nodes) {
    if (node.ref.id !== ref?.id) continue;
    if (node.kind === 'trace') {
      if (session.store.get(node.trace.traceId)?.state === 'answered') ids.add(node.trace.traceId);
    } else if (node.kind === 'evaluation' || node.state === 'answered') {
      const window = node.kind === 'page' ? session.store.inState('answered', node.page * PAGE_SIZE, PAGE_SIZE) : session.store.inState('answered');
      for (const t of window) ids.add(t.traceId);
    }
  }
  return [...ids];
}

/**
 * The evaluation's line in the tree. During a run its counts are the run's progress, the same coalesced update the
 * toast and the status bar draw (the store, read from the journal, lags them). Answers not submitted wait for a
 * person only when review is on (`reviewBeforeSubmit`); otherwise they wait to be submitted.
 */
export function evaluationDescription(session: EvaluationSession, reviewOn: boolean): string {
  const progress = session.isRunning && session.lastProgress?.total ? session.lastProgress : undefined;
  if (!session.hasPrompts && !progress) return session.isRunning ? 'starting…' : 'prompts not fetched';
  const c = progress?.counts ?? session.store.snapshotCounts();
  const total = progress?.total ?? session.store.total;
  const parts = [`${c.submitted}/${total} submitted`];
  if (c.failed) parts.push(`${c.failed} failed`);
  if (c.answered) parts.push(reviewOn ? `${c.answered} to review` : `${c.answered} waiting to submit`);
  if (session.isRunning) parts.push('running');
  return parts.join(' · ');
}

export function groupLabel(state: LocalTraceState, count: number): string {
  return `${STATE_LABELS[state]} (${count})`;
}

/** Defined with the rows a runner sends (a followed run's view), so both ends cut a text alike. */
export { preview } from '../../core';
