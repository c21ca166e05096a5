import { Readable } from 'node:stream';
import type { CommandIo } from '../../src/commands/command.js';

/**
 * In-process I/O for a command: `input` on its standard input (default
 * none), what it writes, and signals that never come.
 */
export function captureIo(input = ''): CommandIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdin: Readable.from(input === '' ? [] : [Buffer.from(input)]),
    stdout: { write: (text: string) => (out += text) },
    stderr: { write: (text: string) => (err += text) },
    signals: { once: () => undefined },
    out: () => out,
    err: () => err,
  };
}
