import type { ProxyConfig } from '../../../api/proxy';
import type { PythonTargetSpec } from '../python/pythonTarget';
import type { Target } from '../target';

/**
 * What a user chose as the target, as both front ends parse it (CLI flags, editor settings): everything
 * that decides the answers, and nothing secret. Keys and header values travel apart, in TargetSecrets.
 */
export type TargetSpec =
  | { type: 'echo' }
  | {
      type: 'openai';
      baseUrl: string;
      model: string;
      systemPrompt?: string;
      temperature?: number;
      maxTokens?: number;
      stream?: boolean;
      /** Through the Batch API (half the price, answers within 24 h); the same requests, so the same target. */
      batch?: boolean;
      /** Requests a batch failed for a passing reason: in a new batch (the default), or as live calls. */
      batchFallback?: 'batch' | 'live';
    }
  | {
      type: 'http';
      /** Never with a secret in its query: those parameters are named in secretQuery, their values in TargetSecrets.query. */
      url: string;
      method?: string;
      bodyTemplate?: string;
      answerPath: string;
      usagePath?: string;
      ssePath?: string;
      /** Query parameters added at send time with secret values (names only: they shape the request). */
      secretQuery?: string[];
    }
  | { type: 'command'; command: string }
  | PythonTargetSpec
  /** A long-lived command speaking the worker protocol (JSON lines), started `workers` times. */
  | { type: 'worker'; command: string; workers?: number }
  | { type: 'vscode-lm'; model?: string };

/**
 * Where an endpoint's secrets come from, never the secrets: plain headers (kept in settings, shown in process lists),
 * the names of secret headers (values in the editor's secret storage, or the environment variables headerEnv names in
 * the CLI) and the variable holding the model key (the CLI's --api-key-env).
 */
export interface SecretSources {
  headers?: Record<string, string>;
  secretHeaders?: string[];
  headerEnv?: Record<string, string>;
  /** The environment variable of each secret query parameter (the CLI's; see ./querySecrets.ts). */
  queryEnv?: Record<string, string>;
  apiKeyEnv?: string;
}

/**
 * A target as a user writes it: `evalRunner.target` in settings, a `--config` file's `target`, or the CLI's flags
 * read into one. Its spec plus where its secrets come from; `manual` (the editor's, no model) has no spec.
 */
export type TargetConfig =
  | Exclude<TargetSpec, { type: 'openai' | 'http' }>
  | (Extract<TargetSpec, { type: 'openai' }> & SecretSources)
  | (Extract<TargetSpec, { type: 'http' }> & SecretSources)
  | { type: 'manual' };

export type TargetType = TargetConfig['type'];

export interface TargetSecrets {
  /** The model key (openai). */
  apiKey?: string;
  /** Extra request headers (openai, http); their values are treated as secrets. */
  headers?: Record<string, string>;
  /** Values of the http target's secret query parameters, added to its URL only as a request is sent. */
  query?: Record<string, string>;
}

export interface TargetOptions {
  connections: number;
  /** Working directory of a command target. */
  cwd?: string;
  /** Variables a command target must not see (the ones holding this run's secrets). */
  withhold?: readonly string[];
  /** Said with a 401 or 403 from a model endpoint: how to give it the right key. */
  authHint?: string;
  /** The VS Code chat model target, which only the extension can build. */
  lm?: (model: string | undefined) => Target;
  /** The proxy for HTTP targets; undefined: the environment's; null: none. */
  proxy?: ProxyConfig | null;
  /** Where long-lived workers' stderr goes (python, worker). */
  onLog?: (level: 'info' | 'warn', message: string) => void;
  /** The Batch API's limits per file and first poll pause (tests make them small). */
  batch?: { limits?: BatchLimits; pollMs?: number };
}

/** The Batch API's limits per input file (50,000 requests, 200 MB); tests inject smaller ones. */
export interface BatchLimits {
  maxRequests: number;
  maxBytes: number;
}

/** Who answered, for people (no secret) and for comparison (a fingerprint of what changes answers). */
export interface TargetIdentity {
  description: string;
  fingerprint: string;
  /**
   * What changes answers, named for people (journaled with the run, so that a conflict can say what differs).
   * Long values are shortened to a prefix and a hash; never a secret.
   */
  facts: Record<string, string>;
  /** Fingerprints an earlier version gave the same target (a python file named by its path from the working folder). */
  aliases?: string[];
}
