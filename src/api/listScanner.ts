// The JSON grammar of the prompt list's body, read piece by piece: containers, strings and literals checked as
// JSON.parse would, with nothing kept but what the subclass (ListParser) marks as wanted. What each value is to the
// list (its role) is the subclass's to say; this file knows only SKIP, a value read and dropped.

/** The body is not JSON: cut short, or wrong somewhere. */
export class ListSyntaxError extends Error {
  override name = 'ListSyntaxError';
  constructor(readonly offset: number, detail: string) {
    super(`${detail} at byte ${offset}`);
  }
}

/** The body is JSON, or may be, but goes past a bound the client keeps against a hostile service. */
export class ListLimitError extends Error {
  override name = 'ListLimitError';
}

export const OBJ = 1;
export const ARR = 2;
// Frame states: what the next token of a container (or of the document, frame 0) must be.
export const DOC_VALUE = 0;
const DOC_DONE = 1;
export const O_KEY_OR_END = 2;
export const O_KEY = 3;
const O_COLON = 4;
export const O_VALUE = 5;
const O_COMMA_OR_END = 6;
export const A_VALUE_OR_END = 7;
export const A_VALUE = 8;
const A_COMMA_OR_END = 9;
/** The role of a value the list does not need: checked, never kept. */
export const SKIP = 0;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MAX_LITERAL_BYTES = 4096;

function isLiteralByte(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x2d || c === 0x2b || c === 0x2e;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

/** One escaped character's letter after the backslash (other than u). */
function isSimpleEscape(c: number): boolean {
  return c === 0x22 || c === 0x5c || c === 0x2f || c === 0x62 || c === 0x66 || c === 0x6e || c === 0x72 || c === 0x74;
}

export abstract class ListScanner {
  private readonly maxDepth: number;
  private types = new Uint8Array(64);
  protected states = new Uint8Array(64);
  protected roles = new Uint8Array(64);
  /** Depth of the innermost open container (0: none; frame 0 is the document). */
  protected depth = 0;
  /** Bytes consumed before the current piece. */
  private offset = 0;

  // The token under way across pieces: a string (captured or only checked) or a literal.
  private token: 'none' | 'string' | 'literal' = 'none';
  private tokenRole = SKIP;
  private captured: Buffer[] = [];
  private capturedBytes = 0;
  private captureLimit = 0;
  /** Backslashes ending the captured bytes so far (an odd run escapes a quote at the start of the next piece). */
  private backslashRun = 0;
  /** A checked (skipped) string's escape state: 0 none, 1 after a backslash, 2–5 inside \uXXXX. */
  private escape = 0;

  /** Whether anything but whitespace has come. */
  started = false;

  constructor(maxDepth: number | undefined) {
    this.maxDepth = maxDepth ?? 1 << 20;
    this.states[0] = DOC_VALUE;
    this.roles[0] = SKIP;
  }

  // What the list makes of the values; each is called with `depth` at the value's container.
  /** The role of a container opening here (called before it opens). */
  protected abstract roleOfContainer(type: number): number;
  /** A container with this role has opened (it is at `depth`). */
  protected abstract opened(role: number): void;
  /** A container with this role has closed (its parent is at `depth`). */
  protected abstract closed(role: number): void;
  /** The role of a string or literal starting here; SKIP for one the list does not need. */
  protected abstract roleOfScalar(isString: boolean): number;
  /** The most bytes a string with this role may have, its quotes included. */
  protected abstract limitOf(role: number): number;
  /** The error for a string with this role over its limit. */
  protected abstract tooLarge(role: number): ListLimitError;
  protected abstract assignString(role: number, value: string, bytes: number): void;
  protected abstract assignLiteral(role: number, value: unknown): void;
  /**
   * An object starting at `buf[i]`, read whole by the subclass where it can (JSON.parse of its bytes): the index
   * after it, having called valueDone(); -1 to read it here, token by token.
   */
  protected wholeObject(_buf: Buffer, _i: number): number {
    return -1;
  }

  /** Reads one piece of the body. Throws ListSyntaxError or ListLimitError. */
  write(chunk: Buffer): void {
    const n = chunk.length;
    let i = 0;
    while (i < n) {
      if (this.token === 'string') i = this.tokenRole === SKIP ? this.checkString(chunk, i) : this.captureString(chunk, i, i);
      else if (this.token === 'literal') i = this.continueLiteral(chunk, i);
      else i = this.structural(chunk, i);
    }
    this.offset += n;
  }

  /** The body ended: checks that it was whole. */
  protected endDocument(): void {
    if (this.token === 'literal') this.finishLiteral();
    if (this.token === 'string' || this.depth > 0 || this.states[0] !== DOC_DONE) {
      throw new ListSyntaxError(this.offset, this.offset === 0 ? 'empty body' : 'unexpected end of the body');
    }
  }

  private fail(at: number, detail: string): never {
    throw new ListSyntaxError(this.offset + at, detail);
  }

  /** One byte outside any string or literal. */
  private structural(buf: Buffer, i: number): number {
    const c = buf[i]!;
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) return i + 1;
    this.started = true;
    switch (c) {
      case 0x7b: {
        // {
        const after = this.wholeObject(buf, i);
        if (after >= 0) return after;
        this.open(OBJ, i);
        return i + 1;
      }
      case 0x5b: // [
        this.open(ARR, i);
        return i + 1;
      case 0x7d: // }
        return this.close(OBJ, i);
      case 0x5d: // ]
        return this.close(ARR, i);
      case 0x2c: // ,
        return this.comma(i);
      case 0x3a: // :
        if (this.states[this.depth] !== O_COLON) this.fail(i, 'unexpected ":"');
        this.states[this.depth] = O_VALUE;
        return i + 1;
      case QUOTE:
        return this.startString(buf, i);
      default:
        // A literal begins as a number, true, false or null does (JSON.parse settles the rest).
        if (!((c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x74 || c === 0x66 || c === 0x6e)) this.fail(i, `unexpected byte 0x${c.toString(16)}`);
        this.expectValue(i);
        this.token = 'literal';
        this.tokenRole = this.roleOfScalar(false);
        this.captured = [];
        this.capturedBytes = 0;
        return this.continueLiteral(buf, i);
    }
  }

  private expectValue(at: number): void {
    const s = this.states[this.depth];
    if (s !== DOC_VALUE && s !== O_VALUE && s !== A_VALUE_OR_END && s !== A_VALUE) this.fail(at, 'unexpected value');
  }

  private open(type: number, at: number): void {
    this.expectValue(at);
    const role = this.roleOfContainer(type);
    if (this.depth + 1 >= this.maxDepth) throw new ListLimitError(`JSON nested more than ${this.maxDepth} deep`);
    this.depth++;
    if (this.depth >= this.types.length) this.grow();
    this.types[this.depth] = type;
    this.states[this.depth] = type === OBJ ? O_KEY_OR_END : A_VALUE_OR_END;
    this.roles[this.depth] = role;
    this.opened(role);
  }

  private grow(): void {
    const size = Math.min(this.types.length * 2, this.maxDepth + 1);
    for (const name of ['types', 'states', 'roles'] as const) {
      const next = new Uint8Array(size);
      next.set(this[name]);
      this[name] = next;
    }
  }

  private close(type: number, i: number): number {
    const s = this.states[this.depth];
    const ok = type === OBJ ? s === O_KEY_OR_END || s === O_COMMA_OR_END : s === A_VALUE_OR_END || s === A_COMMA_OR_END;
    if (this.depth === 0 || this.types[this.depth] !== type || !ok) this.fail(i, `unexpected "${type === OBJ ? '}' : ']'}"`);
    const role = this.roles[this.depth]!;
    this.depth--;
    this.closed(role);
    this.valueDone();
    return i + 1;
  }

  private comma(i: number): number {
    const s = this.states[this.depth];
    if (s === O_COMMA_OR_END) this.states[this.depth] = O_KEY;
    else if (s === A_COMMA_OR_END) this.states[this.depth] = A_VALUE;
    else this.fail(i, 'unexpected ","');
    return i + 1;
  }

  /** A value (or key) has ended: its container moves on. */
  protected valueDone(): void {
    const s = this.states[this.depth];
    if (s === DOC_VALUE) this.states[this.depth] = DOC_DONE;
    else if (s === O_VALUE) this.states[this.depth] = O_COMMA_OR_END;
    else if (s === O_KEY_OR_END || s === O_KEY) this.states[this.depth] = O_COLON;
    else this.states[this.depth] = A_COMMA_OR_END;
  }

  private startString(buf: Buffer, i: number): number {
    const s = this.states[this.depth];
    if (s !== O_KEY_OR_END && s !== O_KEY) this.expectValue(i);
    this.token = 'string';
    this.tokenRole = this.roleOfScalar(true);
    if (this.tokenRole === SKIP) {
      this.escape = 0;
      return this.checkString(buf, i + 1);
    }
    this.captured = [];
    this.capturedBytes = 0;
    this.backslashRun = 0;
    this.captureLimit = this.limitOf(this.tokenRole);
    return this.captureString(buf, i, i + 1);
  }

  /** A string the list needs: its bytes (quotes included) up to the closing quote, then decoded by JSON.parse. */
  private captureString(buf: Buffer, start: number, searchFrom: number): number {
    let from = searchFrom;
    for (;;) {
      const q = buf.indexOf(QUOTE, from);
      if (q === -1) {
        this.keep(buf, start, buf.length);
        let run = 0;
        for (let k = buf.length - 1; k >= start && buf[k] === BACKSLASH; k--) run++;
        this.backslashRun = run === buf.length - start ? this.backslashRun + run : run;
        return buf.length;
      }
      let run = 0;
      let k = q - 1;
      for (; k >= start && buf[k] === BACKSLASH; k--) run++;
      if (k < start) run += this.backslashRun;
      if (run % 2 === 1) {
        from = q + 1;
        continue;
      }
      this.keep(buf, start, q + 1);
      this.finishString(q);
      return q + 1;
    }
  }

  private keep(buf: Buffer, start: number, end: number): void {
    if (end <= start) return;
    this.capturedBytes += end - start;
    if (this.capturedBytes > this.captureLimit) throw this.tooLarge(this.tokenRole);
    this.captured.push(buf.subarray(start, end));
  }

  private finishString(endAt: number): void {
    const bytes = this.captured.length === 1 ? this.captured[0]! : Buffer.concat(this.captured, this.capturedBytes);
    this.captured = [];
    this.token = 'none';
    let value: string;
    try {
      value = JSON.parse(bytes.toString('utf8')) as string;
    } catch {
      this.fail(endAt, 'invalid string');
    }
    this.assignString(this.tokenRole, value, bytes.length);
    this.valueDone();
  }

  /** A string the list does not need: checked as JSON.parse would, never kept. */
  private checkString(buf: Buffer, i: number): number {
    const n = buf.length;
    for (; i < n; i++) {
      const c = buf[i]!;
      if (this.escape === 0) {
        if (c === QUOTE) {
          this.token = 'none';
          this.valueDone();
          return i + 1;
        }
        if (c === BACKSLASH) this.escape = 1;
        else if (c < 0x20) this.fail(i, 'control character in a string');
      } else if (this.escape === 1) {
        if (c === 0x75) this.escape = 2;
        else if (isSimpleEscape(c)) this.escape = 0;
        else this.fail(i, 'invalid escape');
      } else {
        if (!isHex(c)) this.fail(i, 'invalid \\u escape');
        this.escape = this.escape === 5 ? 0 : this.escape + 1;
      }
    }
    return n;
  }

  private continueLiteral(buf: Buffer, i: number): number {
    let j = i;
    const n = buf.length;
    while (j < n && isLiteralByte(buf[j]!)) j++;
    if (j > i) {
      this.capturedBytes += j - i;
      if (this.capturedBytes > MAX_LITERAL_BYTES) this.fail(j, `a number or literal longer than ${MAX_LITERAL_BYTES} characters`);
      this.captured.push(buf.subarray(i, j));
    }
    if (j < n) this.finishLiteral(j);
    return j;
  }

  private finishLiteral(at = 0): void {
    const text = Buffer.concat(this.captured, this.capturedBytes).toString('latin1');
    this.captured = [];
    this.token = 'none';
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.fail(at, `invalid literal "${text.slice(0, 20)}"`);
    }
    this.assignLiteral(this.tokenRole, value);
    this.valueDone();
  }
}
