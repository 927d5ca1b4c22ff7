// SVG charts, drawn with the DOM (no library, nothing parsed as HTML): a latency histogram and a timeline of
// answers. Colours come from CSS classes, so a page themes them (the report: light and dark; a webview: VS Code's
// variables).
import { el } from './dom';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 480;
const HEIGHT = 140;
const PAD = { left: 40, right: 8, top: 8, bottom: 24 };

function svgEl<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

function frame(label: string): SVGSVGElement {
  const svg = svgEl('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img', 'aria-label': label, class: 'chart' });
  const title = svgEl('title');
  title.textContent = label;
  svg.append(title);
  return svg;
}

function axisText(svg: SVGSVGElement, x: number, y: number, text: string, anchor: 'start' | 'middle' | 'end'): void {
  const t = svgEl('text', { x, y, 'text-anchor': anchor, class: 'chart-axis' });
  t.textContent = text;
  svg.append(t);
}

/** Bars of counts over equal bins; each bar's title says its range and count. */
function bars(svg: SVGSVGElement, series: Array<{ values: readonly number[]; className: string }>, barTitle: (i: number) => string): void {
  const n = series[0]?.values.length ?? 0;
  const max = Math.max(1, ...series[0]!.values);
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const w = plotW / Math.max(1, n);
  svg.append(svgEl('line', { x1: PAD.left, y1: PAD.top + plotH, x2: WIDTH - PAD.right, y2: PAD.top + plotH, class: 'chart-baseline' }));
  for (const { values, className } of series) {
    values.forEach((v, i) => {
      if (v === 0) return;
      const h = (v / max) * plotH;
      const bar = svgEl('rect', { x: PAD.left + i * w + 0.5, y: PAD.top + plotH - h, width: Math.max(1, w - 1), height: h, class: className });
      const title = svgEl('title');
      title.textContent = barTitle(i);
      bar.append(title);
      svg.append(bar);
    });
  }
  axisText(svg, PAD.left - 4, PAD.top + 10, max.toLocaleString('en-US'), 'end');
  axisText(svg, PAD.left - 4, PAD.top + plotH, '0', 'end');
}

/** How many answers took how long: equal bins from 0 to the slowest. */
export function latencyHistogram(hist: { edges: readonly number[]; counts: readonly number[] }, label: string): SVGSVGElement {
  const svg = frame(label);
  const ms = (v: number) => `${v.toLocaleString('en-US')} ms`;
  bars(svg, [{ values: hist.counts, className: 'chart-bar' }], (i) => `${ms(hist.edges[i]!)}–${ms(hist.edges[i + 1]!)}: ${hist.counts[i]!.toLocaleString('en-US')} answer(s)`);
  axisText(svg, PAD.left, HEIGHT - 6, '0 ms', 'start');
  axisText(svg, WIDTH - PAD.right, HEIGHT - 6, ms(hist.edges[hist.edges.length - 1] ?? 0), 'end');
  return svg;
}

/**
 * Answers journaled over the run's time; traces that failed at the target and answers that stand for a target error
 * in the error colour; a mark above the bins where the target or the service answered with a rate limit.
 */
export function answersTimeline(tl: { binMs: number; answers: readonly number[]; errors: readonly number[]; limited?: readonly number[] }, label: string): SVGSVGElement {
  const svg = frame(label);
  const at = (i: number) => `${((i * tl.binMs) / 1000).toFixed(1)} s`;
  bars(
    svg,
    [
      { values: tl.answers, className: 'chart-bar' },
      { values: tl.errors, className: 'chart-bar chart-bar-error' },
    ],
    (i) => `${at(i)}–${at(i + 1)}: ${tl.answers[i]!.toLocaleString('en-US')} trace(s) done${tl.errors[i] ? `, ${tl.errors[i]} of them error(s)` : ''}`,
  );
  limitMarks(svg, tl.limited ?? [], tl.answers.length, (i) => `${at(i)}–${at(i + 1)}: ${tl.limited![i]} rate limit(s)`);
  axisText(svg, PAD.left, HEIGHT - 6, '0 s', 'start');
  axisText(svg, WIDTH - PAD.right, HEIGHT - 6, at(tl.answers.length), 'end');
  return svg;
}

/** A small mark on top of the plot over each bin that holds rate limits. */
function limitMarks(svg: SVGSVGElement, limited: readonly number[], bins: number, markTitle: (i: number) => string): void {
  const w = (WIDTH - PAD.left - PAD.right) / Math.max(1, bins);
  limited.forEach((n, i) => {
    if (n === 0) return;
    const mark = svgEl('rect', { x: PAD.left + i * w + 0.5, y: PAD.top - 6, width: Math.max(2, w - 1), height: 4, class: 'chart-limit' });
    const title = svgEl('title');
    title.textContent = markTitle(i);
    mark.append(title);
    svg.append(mark);
  });
}

/** A run's charts with their captions, as the report and Run Details show them (only those with data). */
export function runChartFigures(
  charts: { histogram: { edges: readonly number[]; counts: readonly number[] }; timeline: { binMs: number; answers: readonly number[]; errors: readonly number[]; limited?: readonly number[] } },
  runId: string,
): HTMLElement[] {
  const figure = (caption: string, chart: SVGSVGElement) => {
    const f = el('figure', 'chart-figure');
    f.append(chart, el('figcaption', '', caption));
    return f;
  };
  const figures: HTMLElement[] = [];
  if (charts.histogram.counts.some((c) => c > 0)) figures.push(figure('Latency', latencyHistogram(charts.histogram, `Latency histogram of run ${runId}`)));
  if (charts.timeline.answers.some((c) => c > 0)) {
    figures.push(figure('Answers over time (errors in red, rate limits marked above)', answersTimeline(charts.timeline, `Answers over time in run ${runId}`)));
  }
  return figures;
}
