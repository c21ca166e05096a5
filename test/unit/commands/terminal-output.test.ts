import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { shareTerminal, Terminal } from '../../../src/commands/terminal.js';
import { workerLogger } from '../../../src/commands/worker.js';
import { loadDatabaseConfig } from '../../../src/config/load-config.js';
import { ConfigError } from '../../../src/errors.js';
import { createLogger } from '../../../src/logger.js';
import { Secret } from '../../../src/secret.js';
import { fakeTerminal } from '../../support/fake-terminal.js';

const signals = { once: () => undefined };

/** A terminal's stdout and stderr shared as main shares them, and a logger on its stderr. */
function onTerminal(format?: 'json' | 'pretty', columns = 200) {
  const screen = fakeTerminal(columns);
  const io = shareTerminal({ stdout: screen.stdout, stderr: screen.stderr, signals });
  const logger = createLogger({ level: 'info', format, destination: io.stderr });
  return { screen, io, logger };
}

/** Lines written to a stream that is not a terminal. */
function toPipe() {
  let text = '';
  return {
    stream: { write: (t: string) => (text += t) },
    lines: () => text.split('\n').filter(Boolean),
  };
}

describe('terminal output', () => {
  it('puts a log line emitted while the progress line shows on a line of its own, and draws the progress again below it', () => {
    const { screen, io, logger } = onTerminal();
    io.terminal.progress('jobs: page 3, 1500 records, 700/s');
    logger.info({ account: 'acme', resource: 'jobs', runId: 'r-1', page: 3 }, 'page written');
    io.terminal.progress('jobs: page 4, 2000 records, 710/s');
    logger.warn({ account: 'acme', resource: 'jobs' }, 'slowed by the rate limit');

    const lines = screen.lines();
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/INFO.*page written/);
    expect(lines[0]).toContain('"account":"acme"');
    expect(lines[0]).toContain('"resource":"jobs"');
    expect(lines[0]).toContain('"runId":"r-1"');
    expect(lines[0]).toContain('"page":3');
    expect(lines[1]).toMatch(/WARN.*slowed by the rate limit/);
    expect(lines[2]).toBe('jobs: page 4, 2000 records, 710/s');
  });

  it("keeps a command's own output off the progress line, and leaves nothing of the progress once it ends", () => {
    const { screen, io } = onTerminal();
    io.terminal.progress('jobs: page 1, 500 records, 500/s');
    io.stdout.write('added account acme\n');
    expect(screen.lines()).toEqual(['added account acme', 'jobs: page 1, 500 records, 500/s']);
    io.terminal.endProgress();
    io.stdout.write('resource  mode\n');
    expect(screen.lines()).toEqual(['added account acme', 'resource  mode']);
  });

  it('draws the progress below a line left unfinished (a prompt) instead of over it', () => {
    const { screen, io } = onTerminal();
    io.terminal.progress('jobs: page 1');
    io.stderr.write('continue? ');
    io.terminal.progress('jobs: page 2');
    expect(screen.lines()).toEqual(['continue? ', 'jobs: page 2']);
  });

  it("cuts a progress line to the terminal's width, so that it can be erased whole", () => {
    const { screen, io } = onTerminal(undefined, 20);
    io.terminal.progress('acme/jobs: page 12, 6000 records | acme/job_posts: page 3');
    io.terminal.progress('acme/jobs: page 13, 6500 records | acme/job_posts: page 3');
    expect(screen.lines()).toEqual(['acme/jobs: page 13…']);
  });

  it('draws no progress line and lets text through untouched when standard output is not a terminal', () => {
    const out = toPipe();
    const terminal = new Terminal(out.stream);
    terminal.progress('jobs: page 1');
    terminal.share(out.stream).write('summary\n');
    terminal.endProgress();
    expect(out.lines()).toEqual(['summary']);
  });

  it('writes pino JSON lines, pid and hostname included, where standard error is not a terminal', () => {
    const pipe = toPipe();
    const io = shareTerminal({ stdout: fakeTerminal().stdout, stderr: pipe.stream, signals });
    io.terminal.progress('jobs: page 1');
    createLogger({ destination: io.stderr }).info({ account: 'acme', page: 1 }, 'page written');
    const [line, ...rest] = pipe.lines();
    expect(rest).toEqual([]);
    expect(JSON.parse(line ?? '')).toMatchObject({
      level: 30,
      service: 'hiresync',
      pid: process.pid,
      account: 'acme',
      page: 1,
      msg: 'page written',
    });
  });

  it('writes one line per event on a terminal, an error as its type and message, in colour', () => {
    const { screen, logger } = onTerminal();
    const error = new Error('403 from /v3/jobs', { cause: new Error('scope missing') });
    logger.error({ err: error, account: 'acme', resource: 'jobs' }, 'run failed');
    logger.error(new Error('connection refused'));
    const written = screen.written();
    expect(screen.colours()).toBeGreaterThan(0);
    expect(screen.lines()).toHaveLength(2);
    expect(screen.lines()[0]).toContain(
      'run failed: Error: 403 from /v3/jobs (cause: Error: scope missing)',
    );
    expect(screen.lines()[1]).toMatch(/ERROR: Error: connection refused$/);
    expect(written).not.toContain('"pid"');
    expect(written).not.toContain('    at ');
  });

  it('redacts secrets in pretty lines as in JSON ones: by field name and by value', () => {
    const value = `tok-${randomBytes(12).toString('hex')}`;
    new Secret(value);
    const { screen, logger } = onTerminal();
    logger.info(
      { clientSecret: 'plain-field-secret', headers: { authorization: 'Bearer abc' }, echo: value },
      `the API echoed ${value}`,
    );
    logger.error({ err: new Error(`401: you sent ${value}`) }, 'token refused');
    const written = screen.written();
    expect(written).not.toContain(value);
    expect(written).not.toContain('plain-field-secret');
    expect(written).not.toContain('Bearer abc');
    expect(screen.lines()).toHaveLength(2);
    expect(screen.lines()[0]).toContain('the API echoed [redacted]');
    expect(screen.lines()[1]).toContain('401: you sent [redacted]');
  });

  it('LOG_FORMAT=json writes JSON on a terminal, and LOG_FORMAT=pretty pretty lines, without colour, to a pipe', () => {
    const env = { DATABASE_URL: 'postgres://u@db/x' };
    const json = loadDatabaseConfig({ ...env, LOG_FORMAT: 'json' }).logFormat;
    const pretty = loadDatabaseConfig({ ...env, LOG_FORMAT: 'pretty' }).logFormat;
    expect(loadDatabaseConfig(env).logFormat).toBeUndefined();
    expect(loadDatabaseConfig({ ...env, LOG_FORMAT: 'auto' }).logFormat).toBeUndefined();

    const { screen, logger } = onTerminal(json);
    logger.info({ account: 'acme' }, 'page written');
    expect(JSON.parse(screen.lines()[0] ?? '')).toMatchObject({ msg: 'page written' });

    const pipe = toPipe();
    createLogger({ format: pretty, destination: pipe.stream }).info({ account: 'acme' }, 'hello');
    expect(pipe.lines()).toHaveLength(1);
    expect(pipe.lines()[0]).toMatch(/INFO: hello \{"account":"acme"\}$/);
    expect(pipe.lines()[0]).not.toContain('\u001b');
  });

  it('refuses a LOG_FORMAT it does not know, naming the variable', () => {
    expect(() =>
      loadDatabaseConfig({ DATABASE_URL: 'postgres://u@db/x', LOG_FORMAT: 'xml' }),
    ).toThrow(ConfigError);
    expect(() =>
      loadDatabaseConfig({ DATABASE_URL: 'postgres://u@db/x', LOG_FORMAT: 'xml' }),
    ).toThrow(/LOG_FORMAT: must be json, pretty or auto/);
  });

  it("writes the worker's log lines pretty on a terminal, and on a pipe with LOG_FORMAT=pretty", () => {
    const screen = fakeTerminal();
    workerLogger({ logLevel: 'info', logFormat: undefined }, screen.stdout).info(
      { port: 9464 },
      'worker started',
    );
    expect(screen.lines()).toHaveLength(1);
    expect(screen.lines()[0]).toMatch(/INFO: worker started \{"port":9464\}$/);

    const pipe = toPipe();
    workerLogger({ logLevel: 'info', logFormat: 'pretty' }, pipe.stream).info('worker stopped');
    expect(pipe.lines()).toHaveLength(1);
    expect(pipe.lines()[0]).toMatch(/INFO: worker stopped$/);
  });
});
