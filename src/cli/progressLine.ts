import { progressText } from '../core';
import type { RunProgress } from '../core';
import { safeText } from './terminalText';

/** One live line on a terminal; periodic plain lines elsewhere (CI logs). */
export function progressReporter(stream: NodeJS.WriteStream, label: string): { update(p: RunProgress): void; end(): void } {
  const tty = stream.isTTY === true;
  let lastPlain = 0;
  let shown = false;
  return {
    update(p) {
      // The waiting reason quotes the service: made inert before the line's own control codes go around it.
      const text = safeText(progressText(label, p));
      if (tty) {
        stream.write(`\r\x1b[K${text.slice(0, (stream.columns || 120) - 1)}`);
        shown = true;
      } else if (Date.now() - lastPlain >= 5000 && p.phase !== 'done') {
        lastPlain = Date.now();
        stream.write(`${text}\n`);
      }
    },
    end() {
      if (tty && shown) stream.write('\r\x1b[K');
    },
  };
}
