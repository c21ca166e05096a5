import { describe, expect, it } from 'vitest';
import { main } from '../../src/main.js';
import { fakeTerminal } from '../support/fake-terminal.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { harness } = cleanupAfterEach();

const signals = { once: () => undefined };
/** A pretty log line: time, level, message. */
const LOG_LINE = /^\[\d\d:\d\d:\d\d\.\d{3}\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL): /;
/** What sync's progress line holds. */
const PROGRESS = /page \d+, \d+ records/;

describe('hiresync sync on a terminal', () => {
  it('writes pretty log lines on lines of their own while it draws its progress, and leaves the summary last', async () => {
    const h = await harness({ simulator: { dataset: { counts: { jobs: 30 } } } });
    const screen = fakeTerminal(160);
    const env = {
      ...h.env,
      HIRESYNC_RESOURCES: 'jobs',
      HIRESYNC_PER_PAGE: '5',
      LOG_LEVEL: 'debug',
    };
    const code = await main(['sync'], env, {
      stdout: screen.stdout,
      stderr: screen.stderr,
      signals,
    });
    const lines = screen.lines();
    expect(code, lines.join('\n')).toBe(0);

    // Progress was drawn between log lines (a debug line per API request)...
    expect(screen.written()).toMatch(PROGRESS);
    const logs = lines.filter((line) => LOG_LINE.test(line));
    expect(logs.length).toBeGreaterThan(6);
    // ...yet no line of the screen holds both, and no progress is left behind.
    for (const line of lines) expect(LOG_LINE.test(line) && PROGRESS.test(line), line).toBe(false);
    expect(lines.filter((line) => PROGRESS.test(line))).toEqual([]);
    const summary = lines.findIndex((line) => /^resource\s+mode\s/.test(line));
    expect(summary).toBeGreaterThan(0);
    expect(
      lines.slice(0, summary).every((line) => LOG_LINE.test(line)),
      lines.join('\n'),
    ).toBe(true);
    expect(lines[summary + 2]).toMatch(/^jobs\s+full\s+\d+\s+30\s/);
  });

  it('writes JSON log lines, as before, when standard error is a pipe', async () => {
    const h = await harness({ simulator: { dataset: { counts: { jobs: 10 } } } });
    let err = '';
    const code = await main(
      ['sync'],
      { ...h.env, HIRESYNC_RESOURCES: 'jobs', LOG_LEVEL: 'debug' },
      {
        stdout: fakeTerminal().stdout,
        stderr: { write: (text: string) => (err += text) },
        signals,
      },
    );
    expect(code, err).toBe(0);
    const lines = err.split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(JSON.parse(line)).toHaveProperty('level');
  });
});
