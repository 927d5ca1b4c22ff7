// Building blocks of the webview pages. Every string from the service or a target is adversarial by design: it is
// only ever set as textContent, never parsed as HTML.
import type { IconName } from './icons';

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * Sets a node's text only when it differs: writing the same text still replaces the text node, and each replacement
 * costs the editor's renderer a style, layout and paint pass (Run Details' summary is set once a second during a run).
 */
export function setText(node: Node, text: string): void {
  if (node.textContent !== text) node.textContent = text;
}

/** A codicon (the icon font VS Code draws its own UI with). */
export function icon(name: IconName, extra?: string): HTMLSpanElement {
  return el('span', `codicon codicon-${name}${extra ? ` ${extra}` : ''}`);
}

/** A labelled checkbox for a toolbar: the label to place, and the box to read. */
export function toggle(text: string, checked: boolean): { label: HTMLLabelElement; box: HTMLInputElement } {
  const label = el('label', 'toggle');
  const box = el('input');
  box.type = 'checkbox';
  box.checked = checked;
  label.append(box, el('span', '', ` ${text}`));
  return { label, box };
}

/** A button showing an icon and a word. */
export function iconButton(name: IconName, text: string, className = 'button'): HTMLButtonElement {
  const button = el('button', className);
  button.append(icon(name), el('span', '', ` ${text}`));
  return button;
}

/** A labelled drop-down for a toolbar: [value, text] options, the first chosen unless `value` says otherwise. */
export function select(className: string, label: string, options: ReadonlyArray<readonly [string, string]>, value?: string): HTMLSelectElement {
  const node = el('select', className);
  node.setAttribute('aria-label', label);
  for (const [v, text] of options) node.append(new Option(text, v));
  if (value !== undefined) node.value = value;
  return node;
}

/** A search box for a toolbar. */
export function searchBox(placeholder: string, value = ''): HTMLInputElement {
  const input = el('input', 'search');
  input.type = 'search';
  input.placeholder = placeholder;
  input.setAttribute('aria-label', 'Search traces');
  input.value = value;
  return input;
}

/** Calls fn with the box's value once typing pauses (120 ms), so 100k rows are filtered once, not per key. */
export function onTypingPause(input: HTMLInputElement, fn: (value: string) => void): void {
  let timer = 0;
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = window.setTimeout(() => fn(input.value), 120);
  });
}

/** Runs fn once the next frame has been painted (a task queued from rAF runs after that paint). */
export function afterPaint(fn: () => void): void {
  requestAnimationFrame(() => setTimeout(fn, 0));
}
