// The bundles get the package's version at build time (scripts/build.mjs defines it); code compiled by tsc
// for the tests reports "dev".
declare const EVAL_RUNNER_VERSION: string | undefined;

export const TOOL_VERSION: string = typeof EVAL_RUNNER_VERSION === 'string' ? EVAL_RUNNER_VERSION : 'dev';
