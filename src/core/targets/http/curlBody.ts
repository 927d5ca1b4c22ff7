// Where the prompt goes in a JSON body: its string fields, where each stands in the text, and the body as a
// template with {{prompt}} in the one chosen (Select Target's curl import, --prompt-path).
import { CurlSyntaxError } from './curlShell';

/** What the http target replaces with the prompt. */
export const PROMPT = '{{prompt}}';

export interface PromptField {
  /** RFC 9535 JSONPath of the field, e.g. $.messages[1].content (what --prompt-path and the editor show). */
  path: string;
  /** The same in the dotted form, e.g. messages.1.content. */
  dotted: string;
  value: string;
}

/** The body as a template: the string field at `path` (either form of PromptField's path) replaced by {{prompt}}. */
export function withPromptAt(request: { body?: string | undefined; promptFields: readonly PromptField[] }, path: string): string {
  const wanted = path.trim();
  const field = request.promptFields.find((f) => f.path === wanted || f.dotted === wanted || f.dotted === wanted.replace(/^\$\.?/, ''));
  if (!field || request.body === undefined) {
    throw new CurlSyntaxError(`The body has no string field at "${wanted}". ${fieldList(request.promptFields)}`);
  }
  // Replaced where it stands in the text, so the rest of the body (its spacing, its big numbers) stays as written.
  const node = stringNodes(request.body).find((n) => n.path === field.path)!;
  return request.body.slice(0, node.offset) + JSON.stringify(PROMPT) + request.body.slice(node.offset + node.length);
}

/** The fields one may choose, for a message. */
export function fieldList(fields: readonly PromptField[]): string {
  return fields.length > 0 ? `Its string fields: ${fields.map((f) => f.path).join(', ')}.` : 'It has no JSON string field.';
}

export type StringNode = PromptField & { offset: number; length: number };

/** The string fields of a JSON body, where they stand in its text; none when the body is not JSON. */
export function stringNodes(body: string): StringNode[] {
  try {
    JSON.parse(body);
  } catch {
    return [];
  }
  const out: StringNode[] = [];
  new JsonScanner(body, out).value([]);
  return out;
}

/** Walks JSON text already known to be valid, noting each string value with its path and place. */
class JsonScanner {
  private i = 0;

  constructor(
    private readonly s: string,
    private readonly out: StringNode[],
  ) {}

  value(path: Array<string | number>): void {
    this.space();
    const c = this.s[this.i];
    if (c === '{') this.members(path);
    else if (c === '[') this.items(path);
    else if (c === '"') {
      const offset = this.i;
      const value = this.string();
      this.out.push({ path: jsonPathOf(path), dotted: path.join('.'), value, offset, length: this.i - offset });
    } else this.i += /^[^,\]}\s]+/.exec(this.s.slice(this.i))![0].length; // a number, true, false or null
  }

  private members(path: Array<string | number>): void {
    this.i++;
    for (this.space(); this.s[this.i] !== '}'; this.space()) {
      if (this.s[this.i] === ',') this.i++;
      this.space();
      const name = this.string();
      this.space();
      this.i++; // the colon
      this.value([...path, name]);
    }
    this.i++;
  }

  private items(path: Array<string | number>): void {
    this.i++;
    for (let index = 0; ; index++) {
      this.space();
      if (this.s[this.i] === ']') break;
      if (this.s[this.i] === ',') this.i++;
      this.value([...path, index]);
    }
    this.i++;
  }

  private string(): string {
    const m = /^"(?:[^"\\]|\\.)*"/.exec(this.s.slice(this.i))!;
    this.i += m[0].length;
    return JSON.parse(m[0]) as string;
  }

  private space(): void {
    while (/\s/.test(this.s[this.i] ?? '')) this.i++;
  }
}

function jsonPathOf(path: ReadonlyArray<string | number>): string {
  return `$${path.map((p) => (typeof p === 'number' ? `[${p}]` : /^[A-Za-z_][A-Za-z0-9_]*$/.test(p) ? `.${p}` : `[${JSON.stringify(p)}]`)).join('')}`;
}
