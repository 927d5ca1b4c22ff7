/**
 * Text from the service or a target (trace ids, messages, prompts, answers, error bodies) must not drive the
 * user's terminal: an ESC sequence in a trace id can retitle it, move the cursor or hide a line, and bidi
 * controls can make a line read differently than it is, to a reader and to an agent. Everything the CLI prints, and
 * every agent tool returns (src/tools), that it did not write itself goes through one of these two.
 */

// C0 controls but tab and newline, DEL, C1 controls, and the bidi embedding, override and isolate controls.
const UNSAFE_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
// In serialised JSON, C0 is already escaped: what remains is DEL, C1 and bidi, which JSON allows raw.
const UNSAFE_JSON = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const escape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Human-readable text with every control shown as a visible \uXXXX instead of acting on the terminal. */
export function safeText(text: string): string {
  return text.replace(UNSAFE_TEXT, escape);
}

/** Serialised JSON with the controls JSON leaves raw written as \uXXXX escapes: the same value, inert on a terminal. */
export function safeJson(json: string): string {
  return json.replace(UNSAFE_JSON, escape);
}
