/**
 * A curl command line split into words as the shell it was written for would split it: bash (what API docs,
 * Postman and DevTools' "Copy as cURL (bash)" write) or cmd.exe (DevTools' "Copy as cURL (cmd)"). Variables stay
 * named, not read: the front end decides where their values come from.
 */

/** A piece of a word: text as written, or a variable reference ($NAME, ${NAME}, %NAME% in cmd). */
export type WordPart = { text: string } | { variable: string; raw: string };
export type Word = WordPart[];
export type CurlShell = 'bash' | 'cmd';

/** A command this reader cannot take; the message names the problem, never a value from the command. */
export class CurlSyntaxError extends Error {
  override name = 'CurlSyntaxError';
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/** cmd when the command continues its lines with ^ or quotes with ^" (DevTools' cmd form); bash otherwise. */
export function detectShell(text: string): CurlShell {
  if (/\\[ \t]*\n/.test(text)) return 'bash';
  return /\^\n|\^"/.test(text) ? 'cmd' : 'bash';
}

export function splitWords(text: string, shell: CurlShell): Word[] {
  const normal = text.replace(/\r\n?/g, '\n');
  return shell === 'cmd' ? splitCmd(normal) : new BashSplitter(normal).words();
}

/** Appends literal text to a word, merging with a literal part before it. */
function addText(word: Word, text: string): void {
  const last = word[word.length - 1];
  if (last && 'text' in last) last.text += text;
  else word.push({ text });
}

class BashSplitter {
  private i = 0;
  private word: Word | undefined;
  private readonly out: Word[] = [];

  constructor(private readonly s: string) {}

  words(): Word[] {
    while (this.i < this.s.length) {
      const c = this.s[this.i]!;
      if (this.word === undefined && c === '#') this.skipComment();
      else if (c === ' ' || c === '\t' || c === '\n') this.endWord();
      else if (c === '\\') this.backslash();
      else if (c === "'") this.singleQuoted();
      else if (c === '$' && this.s[this.i + 1] === "'") this.ansiC();
      else if (c === '"') this.doubleQuoted();
      else if (c === '$') this.dollar();
      else if (c === '`') throw new CurlSyntaxError('The command uses command substitution (`…`), which cannot be read here: write the value itself.');
      else if ('|;&<>'.includes(c)) break; // the curl command ends here (a pipe into jq, a redirect)
      else this.text(c, 1);
    }
    this.endWord();
    return this.out;
  }

  private text(text: string, advance: number): void {
    addText((this.word ??= []), text);
    this.i += advance;
  }

  private endWord(): void {
    if (this.word) this.out.push(this.word);
    this.word = undefined;
    this.i++;
  }

  private skipComment(): void {
    const end = this.s.indexOf('\n', this.i);
    this.i = end < 0 ? this.s.length : end;
  }

  /** Backslash-newline continues the line; so does a backslash before spaces at a word's start (a paste that lost its newlines). */
  private backslash(): void {
    const rest = /^\\[ \t]*\n/.exec(this.s.slice(this.i));
    if (rest) this.i += rest[0].length;
    else if (this.word === undefined && /^\\[ \t]/.test(this.s.slice(this.i, this.i + 2))) this.i += 1;
    else if (this.i + 1 < this.s.length) this.text(this.s[this.i + 1]!, 2);
    else this.text('\\', 1);
  }

  private singleQuoted(): void {
    const end = this.s.indexOf("'", this.i + 1);
    if (end < 0) throw new CurlSyntaxError("A single quote (') is not closed.");
    this.text(this.s.slice(this.i + 1, end), end + 1 - this.i);
  }

  private doubleQuoted(): void {
    this.text('', 1);
    for (;;) {
      const c = this.s[this.i];
      if (c === undefined) throw new CurlSyntaxError('A double quote (") is not closed.');
      if (c === '"') break;
      const next = this.s[this.i + 1];
      if (c === '\\' && next === '\n') this.i += 2;
      else if (c === '\\' && next !== undefined && '$`"\\'.includes(next)) this.text(next, 2);
      else if (c === '$') this.dollar();
      else if (c === '`') throw new CurlSyntaxError('The command uses command substitution (`…`), which cannot be read here: write the value itself.');
      else this.text(c, 1);
    }
    this.i++;
  }

  /** $NAME or ${NAME}: a variable; $( a command, refused; any other $ is itself. */
  private dollar(): void {
    const rest = this.s.slice(this.i + 1);
    if (rest.startsWith('(')) throw new CurlSyntaxError('The command uses command substitution ($(…)), which cannot be read here: write the value itself.');
    const braced = /^\{([^}]*)\}/.exec(rest);
    if (braced) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(braced[1]!)) throw new CurlSyntaxError('Only plain ${NAME} variables can be read here (no defaults or other expansions).');
      return this.variable(braced[1]!, `\${${braced[1]}}`);
    }
    const plain = NAME.exec(rest);
    if (plain) return this.variable(plain[0], `$${plain[0]}`);
    this.text('$', 1);
  }

  private variable(name: string, raw: string): void {
    (this.word ??= []).push({ variable: name, raw });
    this.i += raw.length;
  }

  /** $'…': bash's ANSI-C quoting, which DevTools uses for bodies with a ' or a control character. */
  private ansiC(): void {
    let j = this.i + 2;
    let text = '';
    for (;;) {
      const c = this.s[j];
      if (c === undefined) throw new CurlSyntaxError("A $'…' quote is not closed.");
      if (c === "'") break;
      if (c !== '\\') {
        text += c;
        j++;
        continue;
      }
      const [value, length] = ansiEscape(this.s, j);
      text += value;
      j += length;
    }
    this.text(text, j + 1 - this.i);
  }
}

const SIMPLE_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?' };

/** One backslash escape inside $'…' at s[at]: its text and how many characters it spans. */
function ansiEscape(s: string, at: number): [string, number] {
  const c = s[at + 1] ?? '';
  if (c in SIMPLE_ESCAPES) return [SIMPLE_ESCAPES[c]!, 2];
  const hex = { x: 2, u: 4, U: 8 }[c];
  if (hex) {
    const digits = new RegExp(`^[0-9a-fA-F]{1,${hex}}`).exec(s.slice(at + 2))?.[0];
    return digits ? [String.fromCodePoint(parseInt(digits, 16)), 2 + digits.length] : ['\\' + c, 2];
  }
  const octal = /^[0-7]{1,3}/.exec(s.slice(at + 1))?.[0];
  if (octal) return [String.fromCharCode(parseInt(octal, 8) & 0xff), 1 + octal.length];
  if (c === 'c' && s[at + 2]) return [String.fromCharCode(s.charCodeAt(at + 2) & 0x1f), 3];
  return ['\\' + c, 2];
}

/** Private-use characters stand for cmd's %NAME% between its two passes; they never occur in a command. */
const MARK = 0xe000;

/**
 * cmd.exe reads the line first (^ escapes the next character outside its quotes, ^ at a line's end continues
 * it, %NAME% is a variable), then the program's C runtime splits the rest into words ("…", "" and \" inside).
 */
function splitCmd(s: string): Word[] {
  const names: string[] = [];
  let line = '';
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    const variable = c === '%' ? /^%([A-Za-z_][A-Za-z0-9_]*)%/.exec(s.slice(i)) : null;
    if (variable) {
      line += String.fromCharCode(MARK + names.push(variable[1]!) - 1);
      i += variable[0].length - 1;
    } else if (c === '"') {
      quoted = !quoted;
      line += c;
    } else if (c === '^' && !quoted) {
      // ^ then a newline: the line goes on, and its next character is taken as it is (DevTools' ^\n\n is a newline).
      if (s[i + 1] === '\n') i++;
      if (i + 1 < s.length) line += s[++i];
    } else line += c === '\n' && !quoted ? ' ' : c;
  }
  return crtWords(line).map((word) => cmdWord(word, names));
}

/** The Microsoft C runtime's rules for splitting a command line into argv. */
function crtWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (!quoted && (c === ' ' || c === '\t' || c === '\n')) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === '\\') {
      const run = /^\\+/.exec(line.slice(i))![0].length;
      const beforeQuote = line[i + run] === '"';
      word = (word ?? '') + '\\'.repeat(beforeQuote ? Math.floor(run / 2) : run);
      // An odd run escapes the quote after it.
      if (beforeQuote && run % 2 === 1) {
        word += '"';
        i++;
      }
      i += run - 1;
    } else if (c === '"') {
      if (quoted && line[i + 1] === '"') {
        word = (word ?? '') + '"';
        i++;
      } else {
        quoted = !quoted;
        word ??= '';
      }
    } else word = (word ?? '') + c;
  }
  if (quoted) throw new CurlSyntaxError('A double quote (") is not closed.');
  if (word !== undefined) words.push(word);
  return words;
}

function cmdWord(text: string, names: readonly string[]): Word {
  const word: Word = [];
  for (const piece of text.split(/([\ue000-\uf8ff])/)) {
    const index = piece.length === 1 ? piece.charCodeAt(0) - MARK : -1;
    if (index >= 0 && index < names.length) word.push({ variable: names[index]!, raw: `%${names[index]}%` });
    else if (piece) addText(word, piece);
  }
  if (word.length === 0) word.push({ text: '' });
  return word;
}
