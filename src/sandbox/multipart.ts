/** Minimal multipart/form-data reader for text fields: values are returned byte-exact as UTF-8. */
export function multipartBoundary(contentType: string): string | undefined {
  const match = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

export function parseMultipart(body: Buffer, boundary: string): Map<string, string> | undefined {
  const delimiter = Buffer.from(`--${boundary}`);
  const partEnd = Buffer.from(`\r\n--${boundary}`);
  const fields = new Map<string, string>();
  let pos = body.indexOf(delimiter);
  if (pos < 0) return undefined;
  for (;;) {
    pos += delimiter.length;
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) return fields;
    const lineEnd = body.indexOf('\r\n', pos);
    if (lineEnd < 0) return undefined;
    const headerEnd = body.indexOf('\r\n\r\n', lineEnd);
    if (headerEnd < 0) return undefined;
    const headers = body.toString('utf8', lineEnd + 2, headerEnd);
    const next = body.indexOf(partEnd, headerEnd + 4);
    if (next < 0) return undefined;
    const name = /(?:^|;)\s*name="([^"]*)"/im.exec(headers)?.[1];
    if (name !== undefined && !fields.has(name)) fields.set(name, body.toString('utf8', headerEnd + 4, next));
    pos = next + 2;
  }
}
