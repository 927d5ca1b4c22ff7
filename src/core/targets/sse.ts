/**
 * Server-sent events, as streaming model endpoints send them: events separated by a blank line, each with
 * `data:` lines; `data: [DONE]` ends the stream (OpenAI's convention). Read incrementally, so the first piece
 * of an answer is seen (and timed) as it arrives.
 */
export class SseReader {
  private buffer = '';
  /** Where the search for the next blank line resumes: a long event is scanned once, not once per chunk. */
  private scanned = 0;
  private readonly decoder = new TextDecoder('utf-8');
  done = false;

  constructor(private readonly onData: (data: string) => void) {}

  push(chunk: Uint8Array): void {
    if (this.done) return;
    this.buffer += this.decoder.decode(chunk, { stream: true });
    this.drain(false);
  }

  /** The end of the body: a last event without its blank line still counts. */
  end(): void {
    this.buffer += this.decoder.decode();
    this.drain(true);
  }

  private drain(atEnd: boolean): void {
    const blank = /\r?\n\r?\n/g;
    for (;;) {
      // Back up three characters: a separator may have been split across the previous chunk's end.
      blank.lastIndex = Math.max(0, this.scanned - 3);
      const m = blank.exec(this.buffer);
      if (!m) {
        this.scanned = this.buffer.length;
        break;
      }
      this.event(this.buffer.slice(0, m.index));
      this.buffer = this.buffer.slice(m.index + m[0].length);
      this.scanned = 0;
      if (this.done) return;
    }
    if (atEnd && this.buffer.trim()) {
      this.event(this.buffer);
      this.buffer = '';
    }
  }

  private event(block: string): void {
    const data = block
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data === '') return; // a comment, a keep-alive or an event without data
    if (data.trim() === '[DONE]') {
      this.done = true;
      return;
    }
    this.onData(data);
  }
}

/** Whether a response says it is an event stream. */
export function isEventStream(contentType: string | string[] | undefined): boolean {
  const type = (Array.isArray(contentType) ? contentType[0] : contentType)?.split(';')[0]?.trim().toLowerCase();
  return type === 'text/event-stream';
}
