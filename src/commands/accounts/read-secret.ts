import { UsageError } from '../../errors.js';
import type { Input } from '../command.js';

/** Longest line read: far above any credential, low enough that a wrong pipe fails fast. */
const MAX_LINE_BYTES = 64 * 1024;

/**
 * Reads one line from `input` (standard input), up to its first newline or
 * its end, and returns it without its line ending and surrounding whitespace:
 * empty when the input ends first. `what` names the line in the usage error of
 * an over-long one; the line itself is never part of a message.
 */
export async function readLine(input: Input | undefined, what: string): Promise<string> {
  const decoder = new TextDecoder('utf-8');
  let text = '';
  let bytes = 0;
  for await (const chunk of input ?? []) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    bytes += buffer.length;
    text += decoder.decode(buffer, { stream: true });
    if (text.includes('\n')) break;
    if (bytes > MAX_LINE_BYTES) {
      throw new UsageError(`the ${what} on standard input is longer than ${MAX_LINE_BYTES} bytes`);
    }
  }
  text += decoder.decode();
  return (text.split('\n')[0] ?? '').trim();
}

/**
 * Reads one line from `input` (standard input), as {@link readLine}, as is
 * done with the environment's variables. Never from the command line:
 * arguments show in `ps`. `what` names the value in the usage error of an
 * empty line (exit 2); the value itself is never part of a message.
 */
export async function readSecretLine(input: Input | undefined, what: string): Promise<string> {
  const line = await readLine(input, what);
  if (line === '') {
    throw new UsageError(
      `no ${what} on standard input: pipe it in, one line (it is never taken from the command line)`,
    );
  }
  return line;
}
