// An incremental parser of the prompt list's envelope, {code, message, data: [{traceId, content}, …], success}, fed
// the body piece by piece as it arrives: a list of any size is read while holding one item's text and the piece at
// hand, never the whole body. It accepts exactly what JSON.parse accepts (the fuzz test holds it to that), keys in
// any order and fields it does not know (skipped, not kept). Each string the list needs is decoded by JSON.parse
// itself (escapes, surrogate pairs, invalid UTF-8 as U+FFFD, exactly as before), from its bytes found with indexOf.
import type { PromptItem } from './schemas';

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

export interface ListParserOptions {
  /** The largest item (its traceId and content, as sent); a larger one is refused. */
  maxItemBytes: number;
  /** Items per batch handed on, at most. */
  batchItems: number;
  /** A batch is handed on once its text reaches this many characters. */
  batchChars: number;
  /** Deepest nesting accepted (in fields the client skips). */
  maxDepth?: number;
}

/** What the envelope said besides its items, once the body has ended. */
export interface ListEnvelope {
  /** The body was an object (else it is no envelope). */
  isObject: boolean;
  /** Decoded values of code, message and success when they were strings or literals; absent otherwise. */
  code?: unknown;
  message?: unknown;
  success?: unknown;
  data: 'absent' | 'null' | 'array' | 'other';
  /** The first thing wrong with data's items (zod's words: `item 3: traceId: expected string`); later items are skipped. */
  dataIssue: string | undefined;
  /** Items handed on in batches. */
  items: number;
}

const OBJ = 1;
const ARR = 2;
// Frame states: what the next token of a container (or of the document, frame 0) must be.
const DOC_VALUE = 0;
const DOC_DONE = 1;
const O_KEY_OR_END = 2;
const O_KEY = 3;
const O_COLON = 4;
const O_VALUE = 5;
const O_COMMA_OR_END = 6;
const A_VALUE_OR_END = 7;
const A_VALUE = 8;
const A_COMMA_OR_END = 9;
// Roles: what a container or a scalar value is to the list.
const SKIP = 0;
const ENVELOPE = 1;
const DATA = 2;
const ITEM = 3;
const KEY = 4;
const CODE = 5;
const MESSAGE = 6;
const SUCCESS = 7;
const DATA_SCALAR = 8;
const TRACE_ID = 9;
const CONTENT = 10;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MAX_KEY_BYTES = 64 * 1024;
const MAX_ENVELOPE_FIELD_BYTES = 1024 * 1024;
const MAX_LITERAL_BYTES = 4096;
/** Not read: a string field of an item given as another type. */
const WRONG_TYPE = Symbol('wrongType');

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

export class ListParser {
  private readonly maxDepth: number;
  private types = new Uint8Array(64);
  private states = new Uint8Array(64);
  private roles = new Uint8Array(64);
  /** Depth of the innermost open container (0: none; frame 0 is the document). */
  private depth = 0;
  /** Bytes consumed before the current piece. */
  private offset = 0;
  /** The last key read in the envelope and in the current item. */
  private envelopeKey = '';
  private itemKey = '';

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

  private traceId: string | typeof WRONG_TYPE | undefined;
  private content: string | typeof WRONG_TYPE | undefined;
  private itemIndex = 0;
  private itemBytes = 0;

  private batch: PromptItem[] = [];
  private batchChars = 0;
  /** Batches complete and not yet taken (takeBatches). */
  private ready: PromptItem[][] = [];
  readonly envelope: ListEnvelope = { isObject: false, data: 'absent', dataIssue: undefined, items: 0 };

  constructor(private readonly options: ListParserOptions) {
    this.maxDepth = options.maxDepth ?? 1 << 20;
    this.states[0] = DOC_VALUE;
    this.roles[0] = SKIP;
  }

  /** Reads one piece of the body; complete batches wait in takeBatches(). Throws ListSyntaxError or ListLimitError. */
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

  /** The body ended: checks that it was whole, and hands on the last batch. */
  end(): ListEnvelope {
    if (this.token === 'literal') this.finishLiteral();
    if (this.token === 'string' || this.depth > 0 || this.states[0] !== DOC_DONE) {
      throw new ListSyntaxError(this.offset, this.offset === 0 ? 'empty body' : 'unexpected end of the body');
    }
    this.flush();
    return this.envelope;
  }

  /** Whether anything but whitespace has come. */
  started = false;

  /** The batches complete so far, in order; each is handed out once. */
  takeBatches(): PromptItem[][] {
    const out = this.ready;
    this.ready = [];
    return out;
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
      case 0x7b: // {
        this.open(OBJ, i);
        return i + 1;
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
        this.tokenRole = this.roleOfScalar();
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
    if (role === ITEM) {
      this.traceId = undefined;
      this.content = undefined;
      this.itemBytes = 0;
    } else if (role === ENVELOPE) this.envelope.isObject = true;
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
    const role = this.roles[this.depth];
    this.depth--;
    if (role === ITEM) this.finishItem();
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
  private valueDone(): void {
    const s = this.states[this.depth];
    if (s === DOC_VALUE) this.states[this.depth] = DOC_DONE;
    else if (s === O_VALUE) this.states[this.depth] = O_COMMA_OR_END;
    else if (s === O_KEY_OR_END || s === O_KEY) this.states[this.depth] = O_COLON;
    else this.states[this.depth] = A_COMMA_OR_END;
  }

  /** What a container opening here is to the list. */
  private roleOfContainer(type: number): number {
    const parent = this.roles[this.depth];
    const s = this.states[this.depth];
    if (s === DOC_VALUE) return type === OBJ ? ENVELOPE : SKIP;
    if (parent === ENVELOPE && s === O_VALUE) {
      const key = this.envelopeKey;
      if (key === 'data') {
        if (this.envelope.data === 'array') this.dataIssue('data: given more than once');
        this.envelope.data = type === ARR && this.envelope.data !== 'array' ? 'array' : 'other';
        return this.envelope.data === 'array' ? DATA : SKIP;
      }
      if (key === 'code' || key === 'message' || key === 'success') this.envelope[key] = undefined;
      return SKIP;
    }
    if (parent === DATA && (s === A_VALUE || s === A_VALUE_OR_END)) {
      const index = this.itemIndex++;
      if (this.envelope.dataIssue !== undefined) return SKIP;
      if (type !== OBJ) {
        this.dataIssue(`item ${index}: expected object`);
        return SKIP;
      }
      return ITEM;
    }
    if (parent === ITEM && s === O_VALUE) this.wrongItemField();
    return SKIP;
  }

  /** What a string or literal starting here is to the list. */
  private roleOfScalar(): number {
    const parent = this.roles[this.depth];
    const s = this.states[this.depth];
    if (s === O_KEY_OR_END || s === O_KEY) return parent === ENVELOPE || parent === ITEM ? KEY : SKIP;
    if (parent === ENVELOPE && s === O_VALUE) {
      switch (this.envelopeKey) {
        case 'code':
          return CODE;
        case 'message':
          return MESSAGE;
        case 'success':
          return SUCCESS;
        case 'data':
          return DATA_SCALAR;
        default:
          return SKIP;
      }
    }
    if (parent === DATA && (s === A_VALUE || s === A_VALUE_OR_END)) {
      const index = this.itemIndex++;
      if (this.envelope.dataIssue === undefined) this.dataIssue(`item ${index}: expected object`);
      return SKIP;
    }
    if (parent === ITEM && s === O_VALUE) {
      if (this.itemKey === 'traceId') return TRACE_ID;
      if (this.itemKey === 'content') return CONTENT;
    }
    return SKIP;
  }

  /** data given as null or another scalar (after an array: twice, which JSON.parse would settle by the last). */
  private dataScalar(isNull: boolean): void {
    if (this.envelope.data === 'array') this.dataIssue('data: given more than once');
    this.envelope.data = isNull && this.envelope.data !== 'array' ? 'null' : 'other';
  }

  private wrongItemField(): void {
    if (this.itemKey === 'traceId') this.traceId = WRONG_TYPE;
    else if (this.itemKey === 'content') this.content = WRONG_TYPE;
  }

  private dataIssue(issue: string): void {
    this.envelope.dataIssue ??= issue;
  }

  private startString(buf: Buffer, i: number): number {
    const s = this.states[this.depth];
    if (s !== O_KEY_OR_END && s !== O_KEY) this.expectValue(i);
    this.token = 'string';
    this.tokenRole = this.roleOfScalar();
    if (this.tokenRole === SKIP || this.tokenRole === DATA_SCALAR) {
      if (this.tokenRole === DATA_SCALAR) this.dataScalar(false);
      this.tokenRole = SKIP;
      this.escape = 0;
      return this.checkString(buf, i + 1);
    }
    this.captured = [];
    this.capturedBytes = 0;
    this.backslashRun = 0;
    this.captureLimit = this.tokenRole === KEY ? MAX_KEY_BYTES : this.tokenRole === CODE || this.tokenRole === MESSAGE ? MAX_ENVELOPE_FIELD_BYTES : this.options.maxItemBytes - this.itemBytes;
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
    if (this.capturedBytes > this.captureLimit) {
      if (this.tokenRole === TRACE_ID || this.tokenRole === CONTENT) {
        throw new ListLimitError(`item ${this.itemIndex - 1} is larger than ${Math.round(this.options.maxItemBytes / (1024 * 1024))} MiB`);
      }
      throw new ListLimitError(this.tokenRole === KEY ? 'a field name is larger than 64 KiB' : `the envelope's ${this.tokenRole === CODE ? 'code' : 'message'} is larger than 1 MiB`);
    }
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
    this.assignString(value, bytes.length);
    this.valueDone();
  }

  private assignString(value: string, bytes: number): void {
    switch (this.tokenRole) {
      case KEY:
        if (this.roles[this.depth] === ENVELOPE) this.envelopeKey = value;
        else this.itemKey = value;
        return;
      case CODE:
        this.envelope.code = value;
        return;
      case MESSAGE:
        this.envelope.message = value;
        return;
      case SUCCESS:
        this.envelope.success = value;
        return;
      case TRACE_ID:
        this.itemBytes += bytes;
        this.traceId = value;
        return;
      case CONTENT:
        this.itemBytes += bytes;
        this.content = value;
        return;
    }
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
    switch (this.tokenRole) {
      case CODE:
        this.envelope.code = value;
        break;
      case MESSAGE:
        this.envelope.message = value;
        break;
      case SUCCESS:
        this.envelope.success = value;
        break;
      case DATA_SCALAR:
        this.dataScalar(value === null);
        break;
      case TRACE_ID:
      case CONTENT:
        this.wrongItemField();
        break;
    }
    this.valueDone();
  }

  private finishItem(): void {
    if (this.envelope.dataIssue !== undefined) return;
    const index = this.itemIndex - 1;
    const { traceId, content } = this;
    this.traceId = undefined;
    this.content = undefined;
    if (typeof traceId !== 'string') return this.dataIssue(`item ${index}: traceId: expected string`);
    if (typeof content !== 'string') return this.dataIssue(`item ${index}: content: expected string`);
    // An empty id could name no trace: the journal refuses such a list.
    if (traceId === '') return this.dataIssue(`item ${index}: traceId: empty`);
    this.batch.push({ traceId, content });
    this.envelope.items++;
    this.batchChars += traceId.length + content.length;
    if (this.batch.length >= this.options.batchItems || this.batchChars >= this.options.batchChars) this.flush();
  }

  private flush(): void {
    if (this.batch.length === 0) return;
    this.ready.push(this.batch);
    this.batch = [];
    this.batchChars = 0;
  }
}
