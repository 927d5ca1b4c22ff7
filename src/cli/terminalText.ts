// The safe-text helpers are the core's (src/core/safeText.ts), shared with the agents' tools (src/tools).
export { safeJson, safeText } from '../core';
