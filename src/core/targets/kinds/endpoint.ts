/** An endpoint as it may be shown and compared: origin and path, the query's names but never its values. */
export function endpoint(url: string): string {
  const u = new URL(url);
  const names = [...new Set([...u.searchParams.keys()])].sort();
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}${names.length ? `?${names.map((n) => `${n}=…`).join('&')}` : ''}`;
}
