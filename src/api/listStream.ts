// The prompt list read as it streams in: the body goes through the incremental parser (listParser.ts) and its items
// go to the caller's sink in batches, the body paused while the sink works. What the envelope means (a failure, a
// malformed list) is said in the same words as for any answer (errorMapping.ts). A list whose connection drops
// midway is read again from the start: the items the sink already has are skipped, after checking that they are
// the same ones (by a digest of their trace ids), so the sink sees each item once or the call fails.
import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';
import { ApiError } from './errors';
import { judgeAnswer, parseFailureWords } from './errorMapping';
import type { HttpHeaders } from './http';
import type * as ListParserModule from './listParser';
import type { ListEnvelope, ListParser } from './listParser';
import type { PromptItem } from './schemas';
import type { StreamedBody } from './transport';

export type PromptSink = (batch: PromptItem[]) => Promise<void>;

export interface StreamedList {
  /** Items handed to the sink, in all. */
  count: number;
  requestCode: string | undefined;
}

export interface ListStreamOptions {
  operation: string;
  token: string;
  sink: PromptSink;
  /** The largest item accepted (traceId and content as sent). */
  maxItemBytes: number;
  batchItems: number;
  batchChars: number;
}

const HEAD_BYTES = 256;

/**
 * The parser, loaded on the first list: in the extension it is a file of its own (dist/listParser.js) that
 * activation does not load. The CLI and the runner bundle it.
 */
function parserModule(): typeof ListParserModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./listParser') as typeof ListParserModule;
}

/** The state of one list across its attempts: what the sink has, so a second attempt does not hand it again. */
export class ListStream {
  delivered = 0;
  private readonly digest: Hash = createHash('sha1');

  constructor(private readonly options: ListStreamOptions) {}

  /** The reader of one attempt's body (Transport.stream's `open`). */
  open(status: number, headers: HttpHeaders): StreamedBody<StreamedList> {
    return new ListBody(this, this.options, status, headers);
  }

  /** The digest of the trace ids the sink has, so far. */
  deliveredDigest(): string {
    return this.digest.copy().digest('hex');
  }

  async deliver(batch: PromptItem[]): Promise<void> {
    await this.options.sink(batch);
    this.digest.update(idsText(batch, batch.length));
    this.delivered += batch.length;
  }
}

class ListBody implements StreamedBody<StreamedList> {
  private readonly parser: ListParser;
  private head = Buffer.alloc(0);
  /** Items of this attempt the sink already had from an earlier one: checked against it, then skipped. */
  private readonly toSkip: number;
  private skipped = 0;
  private readonly replay: Hash | undefined;

  constructor(
    private readonly list: ListStream,
    private readonly options: ListStreamOptions,
    private readonly status: number,
    private readonly headers: HttpHeaders,
  ) {
    this.parser = new (parserModule().ListParser)({ maxItemBytes: options.maxItemBytes, batchItems: options.batchItems, batchChars: options.batchChars });
    this.toSkip = list.delivered;
    this.replay = this.toSkip > 0 ? createHash('sha1') : undefined;
  }

  data(chunk: Buffer): void | Promise<void> {
    if (this.head.length < HEAD_BYTES) this.head = Buffer.concat([this.head, chunk.subarray(0, HEAD_BYTES - this.head.length)]);
    try {
      this.parser.write(chunk);
    } catch (error) {
      throw this.failure(error);
    }
    const batches = this.parser.takeBatches();
    return batches.length > 0 ? this.deliver(batches) : undefined;
  }

  /** Ends the body: the last batch to the sink, then what the envelope means. */
  async end(): Promise<StreamedList> {
    let envelope: ListEnvelope;
    try {
      envelope = this.parser.end();
    } catch (error) {
      throw this.failure(error);
    }
    await this.deliver(this.parser.takeBatches());
    return this.verdict(envelope);
  }

  private async deliver(batches: PromptItem[][]): Promise<void> {
    for (let batch of batches) {
      if (this.skipped < this.toSkip) batch = this.skipKnown(batch);
      if (batch.length > 0) await this.list.deliver(batch);
    }
  }

  /** The part of a batch the sink does not have yet; the part it has must be what it was given before. */
  private skipKnown(batch: PromptItem[]): PromptItem[] {
    const known = Math.min(batch.length, this.toSkip - this.skipped);
    this.replay!.update(idsText(batch, known));
    this.skipped += known;
    if (this.skipped === this.toSkip && this.replay!.digest('hex') !== this.list.deliveredDigest()) throw this.changed();
    return known === batch.length ? [] : batch.slice(known);
  }

  private changed(): ApiError {
    return new ApiError(
      'The service listed other prompts when asked again after a dropped connection',
      'Run again: the list is read from the start.',
      { reason: 'format', operation: this.options.operation, status: this.status },
    );
  }

  private verdict(envelope: ListEnvelope): StreamedList {
    const { operation, token } = this.options;
    const facts = judgeAnswer(
      {
        status: this.status,
        headers: this.headers,
        parseFailure: undefined,
        code: envelope.code,
        message: envelope.message,
        shapeIssue: envelope.isObject ? (typeof envelope.success === 'boolean' ? undefined : 'success: expected boolean') : 'expected object',
        success: typeof envelope.success === 'boolean' ? envelope.success : undefined,
      },
      operation,
      token,
    );
    const issue = envelope.data !== 'array' ? 'expected array' : envelope.dataIssue;
    if (issue !== undefined) {
      throw new ApiError(
        `The service's prompt list is malformed (${issue})`,
        'The service may have changed its format; report this with the request code.',
        { reason: 'format', operation, requestCode: facts.requestCode },
      );
    }
    if (this.skipped < this.toSkip) throw this.changed();
    return { count: this.list.delivered, requestCode: facts.requestCode };
  }

  /** A parser's failure as the ApiError that says it (a body that is not JSON, or one past the client's bounds). */
  private failure(error: unknown): unknown {
    const { operation } = this.options;
    const { ListLimitError, ListSyntaxError } = parserModule();
    if (error instanceof ListLimitError) {
      return new ApiError(`The service's prompt list is malformed (${error.message})`, 'Check the base URL; report this to the service if it is right.', {
        reason: 'format',
        operation,
        status: this.status,
      });
    }
    if (!(error instanceof ListSyntaxError)) return error;
    const head = this.head.toString('utf8').trim();
    const words = this.parser.started ? parseFailureWords(head, this.headers) : 'an empty body';
    return judgeFailure(words, this.status, this.headers, operation, this.options.token);
  }
}

/** The ApiError of a body that is not JSON, as interpret says it. */
function judgeFailure(parseFailure: string, status: number, headers: HttpHeaders, operation: string, token: string): ApiError {
  try {
    judgeAnswer({ status, headers, parseFailure, code: undefined, message: undefined, shapeIssue: undefined, success: undefined }, operation, token);
  } catch (error) {
    if (error instanceof ApiError) return error;
  }
  return new ApiError(`The service answered with ${parseFailure}`, 'Check the base URL.', { reason: 'format', operation, status });
}

/** The digested text of the first `count` items: each trace id and a NUL. One update per batch, not one per item. */
function idsText(batch: readonly PromptItem[], count: number): string {
  let text = '';
  for (let i = 0; i < count; i++) text += `${batch[i]!.traceId}\0`;
  return text;
}
