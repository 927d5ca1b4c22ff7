// An incremental parser of the prompt list's envelope, {code, message, data: [{traceId, content}, …], success}, fed
// the body piece by piece as it arrives: a list of any size is read while holding one item's text and the piece at
// hand, never the whole body. It accepts exactly what JSON.parse accepts (the fuzz test holds it to that), keys in
// any order and fields it does not know (skipped, not kept). Each string the list needs is decoded by JSON.parse
// itself (escapes, surrogate pairs, invalid UTF-8 as U+FFFD, exactly as before), from its bytes found with indexOf.
//
// The JSON grammar is listScanner.ts's; this file says what each value is to the list, and hands on its items.
import type { PromptItem } from './schemas';
import { ARR, A_VALUE, A_VALUE_OR_END, DOC_VALUE, ListLimitError, ListScanner, OBJ, O_KEY, O_KEY_OR_END, O_VALUE, SKIP } from './listScanner';

// The errors are the scanner's; listStream.ts takes them from this module, the bundle's entry.
export { ListLimitError, ListSyntaxError } from './listScanner';

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

// Roles: what a container or a scalar value is to the list (SKIP, 0: nothing).
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

const MAX_KEY_BYTES = 64 * 1024;
const CLOSE_BRACE = 0x7d;
/** Closing braces tried as an item's end before it is read token by token (a `}` in a string fails the parse). */
const WHOLE_TRIES = 4;
const MAX_ENVELOPE_FIELD_BYTES = 1024 * 1024;
/** Not read: a string field of an item given as another type. */
const WRONG_TYPE = Symbol('wrongType');

export class ListParser extends ListScanner {
  /** The last key read in the envelope and in the current item. */
  private envelopeKey = '';
  private itemKey = '';

  private traceId: string | typeof WRONG_TYPE | undefined;
  private content: string | typeof WRONG_TYPE | undefined;
  private itemIndex = 0;
  private itemBytes = 0;

  /** The piece of the body whose items wholeRun could not read at once: read item by item. */
  private noRunIn: Buffer | undefined;

  private batch: PromptItem[] = [];
  private batchChars = 0;
  /** Batches complete and not yet taken (takeBatches). */
  private ready: PromptItem[][] = [];
  readonly envelope: ListEnvelope = { isObject: false, data: 'absent', dataIssue: undefined, items: 0 };

  constructor(private readonly options: ListParserOptions) {
    super(options.maxDepth);
  }

  // write(chunk), the scanner's: reads one piece of the body; complete batches wait in takeBatches().

  /** The body ended: checks that it was whole, and hands on the last batch. */
  end(): ListEnvelope {
    this.endDocument();
    this.flush();
    return this.envelope;
  }

  /** The batches complete so far, in order; each is handed out once. */
  takeBatches(): PromptItem[][] {
    const out = this.ready;
    this.ready = [];
    return out;
  }

  /** What a container opening here is to the list. */
  protected roleOfContainer(type: number): number {
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

  /**
   * An item read whole: the bytes up to one of the next closing braces given to JSON.parse, which accepts them only
   * when that brace closes the item (a brace in a string or a nested object leaves them unfinished). Taken only for a
   * plain item (a string traceId and content, no nested value) within the size cap; anything else is read token by
   * token, which says what is wrong in its own words. The same items either way, at native speed: a 20,000-item list
   * cost a run 4× JSON.parse's CPU read token by token.
   */
  protected override wholeObject(buf: Buffer, i: number): number {
    const s = this.states[this.depth];
    if (this.roles[this.depth] !== DATA || this.envelope.dataIssue !== undefined || (s !== A_VALUE && s !== A_VALUE_OR_END)) return -1;
    if (buf !== this.noRunIn) {
      const after = this.wholeRun(buf, i);
      if (after >= 0) return after;
      this.noRunIn = buf;
    }
    const limit = Math.min(buf.length, i + this.options.maxItemBytes);
    let end = buf.indexOf(CLOSE_BRACE, i + 1);
    for (let tries = 0; end !== -1 && end < limit && tries < WHOLE_TRIES; tries++) {
      let value: unknown;
      try {
        value = JSON.parse(buf.toString('utf8', i, end + 1));
      } catch {
        end = buf.indexOf(CLOSE_BRACE, end + 1);
        continue;
      }
      if (!isPlainItem(value)) return -1;
      this.takeItem(value);
      this.valueDone();
      return end + 1;
    }
    return -1;
  }

  /**
   * The items from here to the piece's last closing brace read at once, as one JSON array, when that is what they are:
   * plain items, separated by commas, within the size cap together. One parse per piece of the body rather than one
   * per item (a 20,000-item list is some 300 pieces); the same items, since bytes that parse as `[...]` from a value's
   * start in an array are those values. Anything else (a piece ending inside an item, a nested value) is read item by
   * item: tried once per piece, so a piece never costs more than twice its parse.
   */
  private wholeRun(buf: Buffer, i: number): number {
    const end = buf.lastIndexOf(CLOSE_BRACE);
    if (end <= i || end - i >= this.options.maxItemBytes) return -1;
    let values: unknown;
    try {
      values = JSON.parse(`[${buf.toString('utf8', i, end + 1)}]`);
    } catch {
      return -1;
    }
    const items = values as unknown[];
    for (const value of items) if (typeof value !== 'object' || value === null || Array.isArray(value) || !isPlainItem(value)) return -1;
    for (const item of items as Array<{ traceId: string; content: string }>) this.takeItem(item);
    this.valueDone();
    return end + 1;
  }

  /** An item read whole (parsed at once): as if its fields had been read one by one. */
  private takeItem(item: { traceId: string; content: string }): void {
    this.itemIndex++;
    this.traceId = item.traceId;
    this.content = item.content;
    this.finishItem();
  }

  protected opened(role: number): void {
    if (role === ITEM) {
      this.traceId = undefined;
      this.content = undefined;
      this.itemBytes = 0;
    } else if (role === ENVELOPE) this.envelope.isObject = true;
  }

  protected closed(role: number): void {
    if (role === ITEM) this.finishItem();
  }

  /** What a string or literal starting here is to the list. */
  protected roleOfScalar(isString: boolean): number {
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
          // A string there is no list: said now, its text skipped. A literal's value (null or not) is seen at its end.
          if (!isString) return DATA_SCALAR;
          this.dataScalar(false);
          return SKIP;
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

  protected limitOf(role: number): number {
    if (role === KEY) return MAX_KEY_BYTES;
    return role === CODE || role === MESSAGE ? MAX_ENVELOPE_FIELD_BYTES : this.options.maxItemBytes - this.itemBytes;
  }

  protected tooLarge(role: number): ListLimitError {
    if (role === TRACE_ID || role === CONTENT) {
      return new ListLimitError(`item ${this.itemIndex - 1} is larger than ${Math.round(this.options.maxItemBytes / (1024 * 1024))} MiB`);
    }
    return new ListLimitError(role === KEY ? 'a field name is larger than 64 KiB' : `the envelope's ${role === CODE ? 'code' : 'message'} is larger than 1 MiB`);
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

  protected assignString(role: number, value: string, bytes: number): void {
    switch (role) {
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

  protected assignLiteral(role: number, value: unknown): void {
    switch (role) {
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

/** An item whose fields are all strings, numbers, booleans or null, with a non-empty traceId and a content. */
function isPlainItem(value: unknown): value is { traceId: string; content: string } {
  const item = value as Record<string, unknown>;
  if (typeof item.traceId !== 'string' || item.traceId === '' || typeof item.content !== 'string') return false;
  for (const key in item) if (typeof item[key] === 'object' && item[key] !== null) return false;
  return true;
}
