import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/logger.js';

/** A real pino logger whose lines are kept in memory, to assert on them. */
export function captureLogger(level = 'debug'): {
  logger: Logger;
  lines: () => string[];
  text: () => string;
} {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      callback();
    },
  });
  const logger = createLogger({ level, destination });
  return { logger, lines: () => lines, text: () => lines.join('\n') };
}
