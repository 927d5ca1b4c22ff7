import { isLoopbackHost, LOOPBACK_NAMES } from '../sandbox/hostCheck';
import { SANDBOX_DEFAULTS, SUBMIT_DATA_CONVENTIONS, startSandbox } from '../sandbox/server';
import type { Sandbox } from '../sandbox/server';
import { choiceOption, intOption, numberOption, parseCommandArgs } from './args';
import { EXIT, UsageError } from './exitCodes';

const LOOPBACK_WORDS = `127.x.x.x, ${LOOPBACK_NAMES.filter((n) => !n.startsWith('127.')).map((n) => n.replace(/^\[(.*)\]$/, '$1')).join(', ')}`;

export const SANDBOX_HELP = `Usage: eval-runner sandbox [options]

Starts the local reference service (the four endpoints of the spec, a Process Details page per
evaluation, and an OpenAI-compatible echo model at /v1/chat/completions). Runs until Ctrl-C.

Options:
  --host HOST                 address to listen on (default ${SANDBOX_DEFAULTS.host}); beyond this machine's loopback
                              (${LOOPBACK_WORDS}) it needs --token-env, every route but /healthz needs
                              "Authorization: Bearer <token>" (the echo model and Batch API too), and the
                              Process Details pages are served on loopback only
  --port N                    port, 0 picks a free one (default ${SANDBOX_DEFAULTS.port})
  --token-env NAME            accept only the token in environment variable NAME (default, on loopback only:
                              ${SANDBOX_DEFAULTS.token}, which everyone knows); never printed
  --benchmark-traces N        prompts of evaluation 1, benchmark (default ${SANDBOX_DEFAULTS.benchmarkTraces})
  --robustness-traces N       prompts of evaluation 2, robustness (default ${SANDBOX_DEFAULTS.robustnessTraces})
  --prompt-bytes N            pad each prompt with context to about N bytes (default: as seeded)
  --generation-seconds S      until evaluation 2's prompts are generated (default ${SANDBOX_DEFAULTS.generationSeconds})
  --evaluation-seconds S      the simulated evaluator's delay per answer (default ${SANDBOX_DEFAULTS.evaluationSeconds})
  --latency-ms N              delay added to every API answer (default 0)
  --fail-rate F               fraction of API requests answered 503, 0 to 1 (default 0)
  --model-latency-ms N        delay of the echo model at /v1/chat/completions (default 0)
  --batch-delay-ms N          how long a Batch API batch (/v1/batches) takes to complete (default 2000)
  --max-body-bytes N          largest accepted request body (default ${SANDBOX_DEFAULTS.maxBodyBytes}); larger: 413
  --submit-data text|null|object|absent
                              what a successful submit carries in data (default text, as the spec shows);
                              the others are conventions of other implementations of the service
  --errors-as-200             refusals (wrong token, unknown trace, ...) as HTTP 200 with success: false
  --json                      print one JSON line with baseUrl, token and evaluations first
  -h, --help                  this help
`;

export async function sandboxCommand(argv: string[], out: NodeJS.WritableStream): Promise<number> {
  refuseTokenInArgv(argv);
  const v = parseCommandArgs(argv, {
    host: { type: 'string' },
    port: { type: 'string' },
    'token-env': { type: 'string' },
    'benchmark-traces': { type: 'string' },
    'robustness-traces': { type: 'string' },
    'generation-seconds': { type: 'string' },
    'evaluation-seconds': { type: 'string' },
    'latency-ms': { type: 'string' },
    'prompt-bytes': { type: 'string' },
    'fail-rate': { type: 'string' },
    'model-latency-ms': { type: 'string' },
    'batch-delay-ms': { type: 'string' },
    'max-body-bytes': { type: 'string' },
    'submit-data': { type: 'string' },
    'errors-as-200': { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (v.help) {
    out.write(SANDBOX_HELP);
    return EXIT.ok;
  }
  const host = v.host ?? SANDBOX_DEFAULTS.host;
  const port = intOption(v.port, 'port', SANDBOX_DEFAULTS.port, 0, 65535);
  const tokenEnv = v['token-env'];
  const token = tokenEnv === undefined ? wellKnownToken(host) : ownToken(tokenEnv, host);
  const sandbox = await startSandbox({
    host,
    port,
    token,
    benchmarkTraces: intOption(v['benchmark-traces'], 'benchmark-traces', SANDBOX_DEFAULTS.benchmarkTraces, 0, 5_000_000),
    robustnessTraces: intOption(v['robustness-traces'], 'robustness-traces', SANDBOX_DEFAULTS.robustnessTraces, 0, 5_000_000),
    promptBytes: intOption(v['prompt-bytes'], 'prompt-bytes', 0, 0, 1_000_000),
    generationSeconds: numberOption(v['generation-seconds'], 'generation-seconds', SANDBOX_DEFAULTS.generationSeconds, 0, 86_400),
    evaluationSeconds: numberOption(v['evaluation-seconds'], 'evaluation-seconds', SANDBOX_DEFAULTS.evaluationSeconds, 0, 86_400),
    latencyMs: intOption(v['latency-ms'], 'latency-ms', 0, 0, 600_000),
    failRate: numberOption(v['fail-rate'], 'fail-rate', 0, 0, 1),
    modelLatencyMs: intOption(v['model-latency-ms'], 'model-latency-ms', 0, 0, 600_000),
    batchDelayMs: intOption(v['batch-delay-ms'], 'batch-delay-ms', 2000, 0, 86_400_000),
    maxBodyBytes: intOption(v['max-body-bytes'], 'max-body-bytes', SANDBOX_DEFAULTS.maxBodyBytes, 1024),
    submitData: choiceOption(v['submit-data'], 'submit-data', SUBMIT_DATA_CONVENTIONS, 'text'),
    errorsAs200: v['errors-as-200'] === true,
  }).catch((error: unknown) => {
    throw listenError(error, host, port);
  });
  if (v.json) {
    const accepts = tokenEnv === undefined ? { token: sandbox.token } : { tokenEnv };
    out.write(`${JSON.stringify({ baseUrl: sandbox.baseUrl, ...accepts, evaluations: sandbox.evaluations })}\n`);
  } else {
    out.write(describeSandbox(sandbox, tokenEnv, host));
  }
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await sandbox.close();
  return EXIT.ok;
}

/** A token given on the command line shows in the process list and the shell's history: named, never taken. */
function refuseTokenInArgv(argv: readonly string[]): void {
  if (argv.some((a) => a === '--token' || a.startsWith('--token='))) {
    throw new UsageError('The sandbox takes no --token: a token on the command line shows in the process list and the shell history. Put it in an environment variable and name that: --token-env NAME.');
  }
}

/** The default token, which everyone knows: only where nobody else can connect. */
function wellKnownToken(host: string): string {
  if (isLoopbackHost(host)) return SANDBOX_DEFAULTS.token;
  throw new UsageError(
    `--host ${host} reaches beyond this machine, and the sandbox's default token ${SANDBOX_DEFAULTS.token} is known to everyone. Choose a token of your own, put it in an environment variable and name that: --token-env NAME (e.g. export SANDBOX_TOKEN=$(openssl rand -hex 16), then --token-env SANDBOX_TOKEN). Or listen on this machine only: --host ${SANDBOX_DEFAULTS.host}.`,
  );
}

/** The token in variable `name`: set, not blank, one the clients accept, and beyond loopback not the well-known one. */
function ownToken(name: string, host: string): string {
  const value = process.env[name];
  if (value === undefined) throw new UsageError(`--token-env ${name}: the variable ${name} is not set. Set it to the token the sandbox should accept (e.g. export ${name}=$(openssl rand -hex 16)).`);
  if (value.trim() === '') throw new UsageError(`--token-env ${name}: the variable ${name} is empty. Set it to the token the sandbox should accept (e.g. export ${name}=$(openssl rand -hex 16)).`);
  if (/[\0-\x1f\x7f\s]/.test(value)) throw new UsageError(`--token-env ${name}: the value of ${name} holds spaces or control characters, which no client sends in a token. Set it to a token without them.`);
  if (!isLoopbackHost(host) && (value === SANDBOX_DEFAULTS.token || value.length < MIN_NETWORK_TOKEN)) {
    throw new UsageError(`--token-env ${name}: a sandbox on --host ${host} can be reached from the network, and the value of ${name} is ${value === SANDBOX_DEFAULTS.token ? 'the well-known default' : `shorter than ${MIN_NETWORK_TOKEN} characters`}. Set it to a token nobody can guess (e.g. export ${name}=$(openssl rand -hex 16)).`);
  }
  return value;
}

// A token the network may try: 16 characters at least (openssl rand -hex 16 gives 32).
const MIN_NETWORK_TOKEN = 16;

/** A port that cannot be had, in words with the way out; anything else as it came. */
function listenError(error: unknown, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return new UsageError(`Port ${port} on ${host} is already in use (another sandbox or program listens there). Use --port 0 to pick a free port, or choose another with --port N.`);
  if (code === 'EACCES') return new UsageError(`Port ${port} on ${host} needs privileges this user does not have. Use --port 0 to pick a free port, or a port above 1023.`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return new UsageError(`Cannot listen on --host ${host}: it is not an address of this machine. Use 127.0.0.1 (the default), or an address this machine has.`);
  return error;
}

/** What the sandbox serves and how to try it; a token of the user's own is named by its variable, never shown. */
function describeSandbox(sandbox: Sandbox, tokenEnv: string | undefined, host: string): string {
  const token = tokenEnv === undefined ? sandbox.token : `$${tokenEnv}`;
  // Beyond loopback a browser could not send the token: the pages are refused there (see tokenGate).
  const pages = isLoopbackHost(host);
  const lines = sandbox.evaluations.map(
    (e) => `  evaluation ${e.evaluationId}: ${e.kind}, ${e.traces} prompts${pages ? ` · Process Details: ${sandbox.baseUrl}/evaluations/${e.evaluationId}` : ''}`,
  );
  if (!pages) lines.push('  Process Details pages: served on loopback only (--host 127.0.0.1); here every route but /healthz needs the token');
  return `Eval Runner sandbox listening on ${sandbox.baseUrl}
  token: ${tokenEnv === undefined ? sandbox.token : `the value of ${tokenEnv} (not shown)`}
${lines.join('\n')}

Try it:
  EVAL_RUNNER_TOKEN=${tokenEnv === undefined ? token : `"${token}"`} node dist/cli.js run --base-url ${sandbox.baseUrl} --evaluation 1 --kind benchmark --target echo
  curl -H "Authorization: Bearer ${token}" '${sandbox.baseUrl}/api/evaluation/promptsAll?evaluationId=1'
Press Ctrl-C to stop.
`;
}
