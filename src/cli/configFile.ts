import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
// The ES module build: esbuild cannot follow the package's main (UMD) build, whose requires are a factory's
// parameter, and the CLI bundle would fail at start with "Cannot find module './impl/format'".
import { parse, printParseErrorCode } from 'jsonc-parser/lib/esm/main.js';
import type { ParseError } from 'jsonc-parser/lib/esm/main.js';
import { parseRunConfig, resolveConfigPaths, RunConfigError } from '../core';
import type { ConfigFile } from '../core';
import { UsageError } from './exitCodes';
import type { NamingFile } from './secretUses';

/** The flags a --config file put first in a command's argv: how many, and the file (by content) they came from. */
export interface ConfigFlags {
  file: NamingFile;
  count: number;
}

/**
 * Reads `--config FILE` (see src/core/options/runConfig.ts) as VS Code reads settings.json: comments and trailing commas
 * allowed. Its relative paths are read from the file's folder. Every problem is a usage error (exit 2).
 */
export function readConfigFile(path: string): { config: ConfigFile; sha256: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`Cannot read --config ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const sha256 = createHash('sha256').update(text).digest('hex');
  text = text.replace(/^\uFEFF/, '');
  const errors: ParseError[] = [];
  const value = parse(text, errors, { allowTrailingComma: true, disallowComments: false }) as unknown;
  const first = errors[0];
  if (first) {
    const { line, column } = lineAndColumn(text, first.offset);
    throw new UsageError(`--config ${path} is not valid JSON at line ${line}, column ${column}: ${PARSE_ERRORS[printParseErrorCode(first.error)] ?? printParseErrorCode(first.error)}.`);
  }
  try {
    return { config: resolveConfigPaths(parseRunConfig(value, `--config ${path}`), dirname(resolve(path))), sha256 };
  } catch (error) {
    if (error instanceof RunConfigError) throw new UsageError(error.message);
    throw error;
  }
}

const PARSE_ERRORS: Readonly<Record<string, string>> = {
  InvalidSymbol: 'this is not a JSON value (strings take double quotes)',
  InvalidNumberFormat: 'a number is written wrongly',
  PropertyNameExpected: 'a setting\'s name in double quotes was expected',
  ValueExpected: 'a value was expected',
  ColonExpected: 'a ":" was expected after the setting\'s name',
  CommaExpected: 'a "," was expected',
  CloseBraceExpected: 'a closing "}" was expected',
  CloseBracketExpected: 'a closing "]" was expected',
  EndOfFileExpected: 'the file should end here (one object only)',
  UnexpectedEndOfComment: 'a /* comment is not closed',
  UnexpectedEndOfString: 'a string is not closed',
  InvalidEscapeCharacter: 'a string holds an unknown \\ escape',
  InvalidCharacter: 'a string holds a control character (write it escaped)',
};

/** 1-based, as editors show them. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: offset - lineStart + 1 };
}

/** Takes `--config FILE` (or `--config=FILE`) out of argv: the file, and the rest. */
export function extractConfig(argv: readonly string[]): { path: string | undefined; rest: string[] } {
  const rest: string[] = [];
  let path: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--config') {
      path = argv[++i];
      if (path === undefined) throw new UsageError('--config needs a file.');
    } else if (a.startsWith('--config=')) path = a.slice('--config='.length);
    else rest.push(a);
  }
  return { path, rest };
}
