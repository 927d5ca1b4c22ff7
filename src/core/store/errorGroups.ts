/** A failure's reason as a group: the words before its details (the first colon), capped. */
export function errorGroup(reason: string): string {
  const colon = reason.indexOf(': ');
  const head = colon > 10 ? reason.slice(0, colon) : reason;
  return head.length > 80 ? `${head.slice(0, 79)}…` : head;
}
