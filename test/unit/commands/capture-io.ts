import type { CommandIo } from '../../../src/commands/command.js';

/** In-process I/O for a command: what it writes, and signals that never come. */
export function captureIo(): CommandIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: { write: (text: string) => (out += text) },
    stderr: { write: (text: string) => (err += text) },
    signals: { once: () => undefined },
    out: () => out,
    err: () => err,
  };
}
