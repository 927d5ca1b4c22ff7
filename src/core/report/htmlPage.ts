// The start of every page Eval Runner writes, the report file and the webviews alike: one escaping, and a head whose
// Content-Security-Policy the caller states (default-src 'none' and what the page alone needs).

/** Text as it stands in HTML, in an element or a quoted attribute: every interpolation into a page goes through it. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * A page up to its body's opening tag. `head` is the page's own lines (its styles), written by the caller, never
 * from data; the title and `bodyClass` are escaped here. The policy keeps its quotes as written (a double-quoted
 * attribute needs only &, <, > and " escaped), so the file reads as the policy it is.
 */
export function pageStart(page: { csp: string; title: string; head: string; bodyClass?: string }): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${page.csp.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
${page.head}
<title>${escapeHtml(page.title)}</title>
</head>
<body${page.bodyClass ? ` class="${escapeHtml(page.bodyClass)}"` : ''}>`;
}
