/**
 * Text from the service or a target (trace ids, messages, prompts, answers, error bodies) must not drive the
 * user's terminal: an ESC sequence in a trace id can retitle it, move the cursor or hide a line, and bidi
 * controls can make a line read differently than it is, to a reader and to an agent. Everything the CLI prints, and
 * every agent tool returns (src/tools), that it did not write itself goes through one of these two.
 */

// C0 controls but tab and newline, DEL, C1 controls, the bidi embedding, override, isolate and mark controls
// (U+061C, U+200E/F), the zero-width space and BOM (U+200B, U+FEFF), and the line and paragraph separators (U+2028/9),
// which some readers break a line at: each can hide text or forge a line of the tool's own. The zero-width (non-)joiners
// U+200C/D stay: Persian, Indic scripts and emoji sequences need them, and they neither reorder nor break a line.
const UNSAFE_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g;
// In serialised JSON, C0 is already escaped: what remains is the rest of the above, which JSON allows raw.
const UNSAFE_JSON = /[\u007f-\u009f\u061c\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g;

const escape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Human-readable text with every control shown as a visible \uXXXX instead of acting on the terminal. */
export function safeText(text: string): string {
  return text.replace(UNSAFE_TEXT, escape);
}

/** Serialised JSON with the controls JSON leaves raw written as \uXXXX escapes: the same value, inert on a terminal. */
export function safeJson(json: string): string {
  return json.replace(UNSAFE_JSON, escape);
}
