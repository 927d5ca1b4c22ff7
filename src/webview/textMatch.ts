/**
 * The tables' search: any of the texts contains the query (already lower case), ignoring case. One definition for
 * Run Details (whose table the host filters) and the pages that filter their own rows (Compare Runs, the report).
 */
export function containsQuery(query: string, ...texts: Array<string | null>): boolean {
  return texts.some((t) => t !== null && t.toLowerCase().includes(query));
}
