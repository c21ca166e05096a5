import type { Output } from '../../src/commands/command.js';

const ESC = '\u001b';
const ERASE_LINE = `${ESC}[2K`;

/** Is `text` at `at` a colour's `ESC [ … m`? Its length, else 0. */
function colourAt(text: string, at: number): number {
  if (!text.startsWith(`${ESC}[`, at)) return 0;
  let end = at + 2;
  while (end < text.length && /[0-9;]/.test(text[end] ?? '')) end += 1;
  return text[end] === 'm' ? end + 1 - at : 0;
}

/**
 * A terminal as a person sees it: standard output and standard error both
 * drawn on one screen of `columns` characters, read back as its lines. It
 * understands what hiresync writes to a terminal: text, `\n`, `\r` (back to
 * the line's start) and `ESC [ 2 K` (erase the line); a colour's `ESC [ … m`
 * is kept out of the text.
 */
export function fakeTerminal(columns = 100): {
  stdout: Output;
  stderr: Output;
  /** The screen's lines, the last one (where the cursor is) included when not empty. */
  lines: () => string[];
  /** Everything written, as written. */
  written: () => string;
  /** How many colours were set in what was written. */
  colours: () => number;
} {
  const rows: string[] = [''];
  let column = 0;
  let written = '';
  let colours = 0;
  const draw = (text: string) => {
    written += text;
    for (let i = 0; i < text.length; i++) {
      const colour = colourAt(text, i);
      if (text.startsWith(ERASE_LINE, i)) {
        rows[rows.length - 1] = '';
        i += ERASE_LINE.length - 1;
      } else if (colour > 0) {
        i += colour - 1;
        colours += 1;
      } else if (text[i] === '\r') {
        column = 0;
      } else if (text[i] === '\n') {
        rows.push('');
        column = 0;
      } else {
        const row = rows[rows.length - 1] ?? '';
        rows[rows.length - 1] =
          row.slice(0, column).padEnd(column) + text[i] + row.slice(column + 1);
        column += 1;
      }
    }
  };
  const stream = (): Output => ({ isTTY: true, columns, write: draw });
  return {
    stdout: stream(),
    stderr: stream(),
    lines: () => (rows[rows.length - 1] === '' ? rows.slice(0, -1) : [...rows]),
    written: () => written,
    colours: () => colours,
  };
}
