/** Tokens by the rule of thumb: a token per four characters (an assumption, said wherever it is used). */
export function charTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export const CHAR_ASSUMPTION = 'input tokens assumed to be characters ÷ 4 (no tokenizer for this model)';

/** OpenAI's model families, whose tokens gpt-tokenizer counts (o200k_base: gpt-4o, gpt-4.1, gpt-5, o-series). */
const OPENAI_FAMILY = /^(openai:)?(gpt-|o\d|chatgpt-)/i;

interface Tokenizer {
  countTokens(text: string): number;
}

/** The tokenizer, loaded on first use by the CLI and the runner only (the extension's bundle leaves it out). */
function tokenizer(): Tokenizer {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('gpt-tokenizer') as Tokenizer;
}

/** A counter of a model's tokens: gpt-tokenizer for OpenAI's families, else characters ÷ 4 (`assumption` says so). */
export function tokenCounter(model: string | undefined): { count: (text: string) => number; assumption?: string } {
  if (model && OPENAI_FAMILY.test(model)) {
    const t = tokenizer();
    return { count: (text) => t.countTokens(text) };
  }
  return { count: charTokens, assumption: CHAR_ASSUMPTION };
}
