/** Width that help text is wrapped to. */
export const HELP_WIDTH = 80;

/**
 * Wraps `text` into lines of at most `width` characters (a longer word keeps
 * its own line); every line after the first is then indented by `indent`
 * spaces, not counted in `width`. Runs of whitespace, line breaks included,
 * count as one space.
 */
export function wrapText(text: string, width: number, indent = 0): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

/**
 * A two-column list, indented by two spaces: terms on the left, their
 * explanations aligned and wrapped on the right.
 */
export function formatTermList(rows: ReadonlyArray<readonly [string, string]>): string {
  const column = 2 + Math.max(0, ...rows.map(([term]) => term.length)) + 3;
  return rows
    .map(([term, text]) => {
      const left = `  ${term}`.padEnd(column);
      return `${left}${wrapText(text, HELP_WIDTH - column, column)}`;
    })
    .join('\n');
}
