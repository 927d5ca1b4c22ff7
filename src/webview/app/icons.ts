// Every codicon the webview pages draw, listed once. scripts/build.mjs keeps only these of @vscode/codicons'
// stylesheet (its 29.6 KB hold every icon, and each page parsed it all on the way to its first paint);
// `icon()` takes only these names, and test/unit/webviewIcons.test.ts checks the built stylesheet against the list.
export const ICONS = [
  // The states (runDetailsSummary.ts STATE_ICONS), on the chips and the rows.
  'circle-outline',
  'sync',
  'comment',
  'pass',
  'error',
  'debug-step-over',
  // The header's buttons.
  'play',
  'debug-rerun',
  'debug-stop',
  'debug-pause',
  'debug-continue',
  'settings-gear',
  'link-external',
  // A row's verdict, note and Debug Trace buttons.
  'thumbsup',
  'thumbsup-filled',
  'thumbsdown',
  'thumbsdown-filled',
  'note',
  'debug-alt',
] as const;

export type IconName = (typeof ICONS)[number];

/** The one modifier the pages use: a running trace's icon turns (the stylesheet keeps its rule for `sync`). */
export const SPIN = 'codicon-modifier-spin';
