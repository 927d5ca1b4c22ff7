import type { PromptItem } from '../api/schemas';
// The sandbox's service API: the spec's four endpoints over an in-memory store, with its rules (auth, fields,
// generation, repeats) and the conventions another implementation may have (--submit-data, --errors-as-200).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { KIND_ROUTES, otherKind } from '../api/evaluationKinds';
import type { EvaluationKind } from '../api/evaluationKinds';
import { delay, parseForm, readBody } from './httpIo';
import type { Reply } from './httpIo';
import type { SandboxOptions, SandboxStats } from './options';
import type { SandboxEvaluation } from './store';
import { bearerOf } from './tokenGate';

export class SandboxApi {
  /**
   * The prompts never change: serialised and encoded once per evaluation, as a real service would cache them. Kept
   * as UTF-8 bytes, the list is written as it is: as a string (100k prompts: 12 MB) each list was measured, encoded
   * and copied again, some 100 ms of the sandbox's CPU a list.
   */
  private readonly listBytes = new Map<number, Buffer>();

  constructor(
    private readonly options: SandboxOptions,
    /** Whether a token is the sandbox's (secretCheck). */
    private readonly isToken: (given: string) => boolean,
    private readonly evaluations: ReadonlyMap<number, SandboxEvaluation>,
    private readonly stats: SandboxStats,
    private readonly maxBodyBytes: number,
  ) {}

  /** Answers one request under /api/. */
  async handle(req: IncomingMessage, url: URL): Promise<Reply> {
    const given = bearerOf(req.headers.authorization);
    if (given === undefined) return this.fail(401, 'Missing Authorization header: send "Authorization: Bearer <token>".');
    if (!this.isToken(given)) return this.fail(401, 'The personal access token is not valid.');
    const kind = (Object.keys(KIND_ROUTES) as EvaluationKind[]).find(
      (k) => KIND_ROUTES[k].listPath === url.pathname || KIND_ROUTES[k].submitPath === url.pathname,
    );
    if (!kind) return this.fail(404, `No route ${url.pathname}.`);
    if (this.options.latencyMs) await delay(this.options.latencyMs);
    if (this.options.failRate && Math.random() < this.options.failRate) return this.fail(503, 'The sandbox injected a failure (--fail-rate); try again.');
    if (KIND_ROUTES[kind].listPath === url.pathname) {
      if (req.method !== 'GET') return this.fail(405, `${url.pathname} takes GET.`, { allow: 'GET' });
      return this.listPrompts(kind, url);
    }
    if (req.method !== 'POST') return this.fail(405, `${url.pathname} takes POST.`, { allow: 'POST' });
    const body = await readBody(req, this.maxBodyBytes);
    if (body === 'tooLarge') return this.fail(413, `The request body is larger than the sandbox limit of ${this.maxBodyBytes} bytes.`);
    const fields = parseForm(req.headers['content-type'] ?? '', body);
    if (fields === 'unsupported') return this.fail(415, 'The body must be application/x-www-form-urlencoded or multipart/form-data.');
    if (fields === 'malformed') return this.fail(400, 'The multipart/form-data body is malformed.');
    return this.submit(kind, fields);
  }

  /** A refusal; with errorsAs200 it is a 200 whose envelope says success: false (rate limits keep their 429). */
  fail(status: number, message: string, headers?: Record<string, string>): Reply {
    return {
      status: this.options.errorsAs200 && status !== 429 ? 200 : status,
      body: envelope(false, message, null),
      ...(headers ? { headers } : {}),
    };
  }

  private listPrompts(kind: EvaluationKind, url: URL): Reply {
    const id = parseId(url.searchParams.get('evaluationId'));
    if (id === undefined) return this.fail(400, 'Query parameter evaluationId is required and must be a number.');
    const generated = this.options.generatedList;
    if (generated && kind === 'benchmark' && id === generated.evaluationId) return { status: 200, body: undefined, pieces: generatedList(generated.traces, generated.promptBytes) };
    const evaluation = this.evaluations.get(id);
    if (!evaluation || evaluation.kind !== kind) return this.fail(404, `No ${kind} evaluation with id ${id}.`);
    const now = Date.now();
    if (now < evaluation.readyAt) {
      const left = Math.ceil((evaluation.readyAt - now) / 1000);
      return this.fail(409, `Adversarial prompt generation for evaluation ${id} is still running (about ${left} s left).`, {
        'retry-after': String(left),
      });
    }
    markListed(evaluation);
    const { code, message } = envelope(true, 'Prompts retrieved successfully', null);
    const head = `{"code":${JSON.stringify(code)},"message":${JSON.stringify(message)},"data":`;
    // A list past a few hundred megabytes is longer than a string may be: sent a thousand items at a time instead.
    if (evaluation.items.length > STREAMED_LIST) return { status: 200, body: undefined, pieces: listPieces(head, evaluation.items) };
    const data = this.listBytes.get(id) ?? Buffer.from(JSON.stringify(evaluation.items));
    this.listBytes.set(id, data);
    return { status: 200, body: undefined, parts: [Buffer.from(head), data, LIST_TAIL] };
  }

  private submit(kind: EvaluationKind, fields: Map<string, string>): Reply {
    const route = KIND_ROUTES[kind];
    const wrongField = KIND_ROUTES[otherKind(kind)].answerField;
    if (fields.has(wrongField)) {
      return this.fail(400, `Field ${wrongField} is not accepted here: ${kind} submissions carry ${route.answerField}.`);
    }
    const idText = fields.get('evaluationId');
    if (idText === undefined) return this.fail(400, 'Field evaluationId is required.');
    const id = parseId(idText);
    if (id === undefined) return this.fail(400, 'Field evaluationId must be a number.');
    const traceId = fields.get('traceId');
    if (traceId === undefined) return this.fail(400, 'Field traceId is required.');
    const answer = fields.get(route.answerField);
    if (answer === undefined) return this.fail(400, `Field ${route.answerField} is required.`);
    const evaluation = this.evaluations.get(id);
    if (!evaluation || evaluation.kind !== kind) return this.fail(404, `No ${kind} evaluation with id ${id}.`);
    if (Date.now() < evaluation.readyAt) return this.fail(409, `Adversarial prompts of evaluation ${id} are not generated yet.`);
    const trace = evaluation.traces.get(traceId);
    if (!trace) return this.fail(404, `Evaluation ${id} has no trace ${JSON.stringify(traceId)}.`);
    if (this.options.rejectRepeats && trace.submissions > 0) return this.fail(409, `Response already submitted for trace ${JSON.stringify(traceId)}.`);
    // A later submission replaces the earlier one and restarts its evaluation.
    trace.answer = answer;
    trace.respondedAt = Date.now();
    trace.listed = true;
    trace.submissions++;
    this.stats.submissions++;
    return { status: 200, body: envelope(true, 'Response submitted successfully', this.submittedData(traceId)) };
  }

  private submittedData(traceId: string): unknown {
    switch (this.options.submitData ?? 'text') {
      case 'text':
        return `Recorded the response for trace ${traceId}.`;
      case 'null':
        return null;
      case 'object':
        return { traceId, recorded: true };
      case 'absent':
        return undefined;
    }
  }
}

function envelope(success: boolean, message: string, data: unknown) {
  return { code: `req_${randomUUID().replace(/-/g, '').slice(0, 20)}`, message, data, success };
}

const STREAMED_LIST = 100_000;
const LIST_TAIL = Buffer.from(',"success":true}');

/** Every trace of a listed evaluation is Sent: marked at its first list, not walked again at each. */
function markListed(evaluation: SandboxEvaluation): void {
  if (evaluation.listed) return;
  for (const trace of evaluation.traces.values()) trace.listed = true;
  evaluation.listed = true;
}

function* listPieces(head: string, items: readonly PromptItem[]): Generator<string> {
  yield `${head}[`;
  for (let i = 0; i < items.length; i += 1000) yield `${i ? ',' : ''}${JSON.stringify(items.slice(i, i + 1000)).slice(1, -1)}`;
  yield '],"success":true}';
}

function parseId(text: string | null | undefined): number | undefined {
  if (text === null || text === undefined || !/^\d{1,15}$/.test(text.trim())) return undefined;
  return Number(text.trim());
}

/** Prompt i of a generated list (SandboxOptions.generatedList): about `bytes` long, with text a JSON writer escapes. */
export function generatedPrompt(i: number, bytes: number): string {
  const head = `Prompt ${i}: "quoted", a tab\t, é, 中, 😀, \\ `;
  return (head + 'lorem ipsum dolor sit amet '.repeat(Math.ceil(bytes / 27))).slice(0, Math.max(head.length, bytes));
}

/** The envelope of a generated list, piece by piece (64 items a piece): success last, as the sandbox always sends it. */
function* generatedList(traces: number, bytes: number): Generator<string> {
  const { code, message } = envelope(true, 'Prompts retrieved successfully', null);
  yield `{"code":${JSON.stringify(code)},"message":${JSON.stringify(message)},"data":[`;
  for (let i = 0; i < traces; i += 64) {
    let piece = '';
    for (let j = i; j < Math.min(traces, i + 64); j++) piece += `${j > 0 ? ',' : ''}${JSON.stringify({ traceId: `g${j}`, content: generatedPrompt(j, bytes) })}`;
    yield piece;
  }
  yield '],"success":true}';
}
