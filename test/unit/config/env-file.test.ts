import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { strayLines, withEnvFile } from '../../../src/config/env-file.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { ConfigError } from '../../../src/errors.js';
import { RESOURCE_NAMES } from '../../../src/resources/index.js';

const SERVICES = { DATABASE_URL: 'postgres://u@db/hiresync', REDIS_URL: 'redis://cache:6379' };
const CLIENT = { HIRESYNC_CLIENT_ID: 'client-1', HIRESYNC_CLIENT_SECRET: 'meant-for-the-proxy' };

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A folder of its own holding `.env` with `text` (none when undefined). */
function folder(text?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'hiresync-env-file-'));
  dirs.push(dir);
  if (text !== undefined) writeFileSync(join(dir, '.env'), text);
  return dir;
}

function problemOf(run: () => unknown): { variable: string; message: string } | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems[0];
    throw error;
  }
  return undefined;
}

describe('.env in the working directory', () => {
  it('adds the variables of .env, the environment winning over the file', () => {
    const dir = folder(
      [
        '# a comment',
        'DATABASE_URL=postgres://u@db/from-file',
        "HIRESYNC_UPDATED_FILTER='updated_at=gte|{since}'",
        'HIRESYNC_FULL_CRON="0 4 * * *"',
        'export HIRESYNC_PER_PAGE=100',
        '',
      ].join('\n'),
    );
    const env = withEnvFile({ HIRESYNC_PER_PAGE: '50', REDIS_URL: 'redis://r' }, dir);
    expect(env).toEqual({
      DATABASE_URL: 'postgres://u@db/from-file',
      HIRESYNC_UPDATED_FILTER: 'updated_at=gte|{since}',
      HIRESYNC_FULL_CRON: '0 4 * * *',
      HIRESYNC_PER_PAGE: '50',
      REDIS_URL: 'redis://r',
    });
  });

  it('takes the file’s value for a variable the environment sets empty, empty being unset as everywhere, so that credentials follow the file’s URLs', () => {
    const dir = folder(
      'HIRESYNC_BASE_URL=https://proxy.example.com\nHIRESYNC_AUTH_URL=https://proxy.example.com/oauth\n',
    );
    // docker compose's `HIRESYNC_BASE_URL: ${HIRESYNC_BASE_URL}` on a host that sets neither.
    const env = withEnvFile(
      { ...SERVICES, HIRESYNC_BASE_URL: '', HIRESYNC_AUTH_URL: ' ', ...CLIENT },
      dir,
    );
    const config = loadConfig(env, RESOURCE_NAMES);
    expect(config.api.baseUrl).toBe('https://proxy.example.com');
    expect(config.api.auth?.tokenUrl).toBe('https://proxy.example.com/oauth/token');
    expect(withEnvFile({ HIRESYNC_SUB: '' }, dir).HIRESYNC_SUB).toBe('');
  });

  it('adds nothing when there is no .env', () => {
    const env = { REDIS_URL: 'redis://r' };
    expect(withEnvFile(env, folder())).toEqual(env);
  });

  it('refuses a malformed .env, naming the file and its lines that set nothing', () => {
    const dir = folder('DATABASE_URL=postgres://u@db/x\nHIRESYNC_FULL_CRON 0 3 * * *\nok=1\n');
    const problem = problemOf(() => withEnvFile({}, dir));
    expect(problem?.variable).toBe(join(dir, '.env'));
    expect(problem?.message).toContain('line 2 sets no variable');
  });

  it('reads a quoted value spanning lines as one, and refuses a quote left open', () => {
    expect(strayLines('A="one\ntwo"\nB=2\n')).toEqual([]);
    expect(strayLines("A='open\nB=2\n")).toEqual([1]);
  });

  it.skipIf(process.getuid?.() === 0)('refuses an unreadable .env, naming the file', () => {
    const dir = folder('A=1\n');
    chmodSync(join(dir, '.env'), 0o000);
    const problem = problemOf(() => withEnvFile({}, dir));
    expect(problem?.variable).toBe(join(dir, '.env'));
    expect(problem?.message).toContain('cannot be read (EACCES)');
  });

  it('reads a .env that is a link to a file, and refuses one whose file is missing rather than read nothing', () => {
    const dir = folder();
    writeFileSync(join(dir, 'settings.env'), 'HIRESYNC_BASE_URL=https://proxy.example.com\n');
    symlinkSync(join(dir, 'settings.env'), join(dir, '.env'));
    expect(withEnvFile({}, dir).HIRESYNC_BASE_URL).toBe('https://proxy.example.com');
    rmSync(join(dir, 'settings.env'));
    const problem = problemOf(() => withEnvFile({}, dir));
    expect(problem?.variable).toBe(join(dir, '.env'));
    expect(problem?.message).toContain('cannot be read (ENOENT)');
  });

  it('refuses a .env that is a folder, naming it', () => {
    const dir = folder();
    mkdirSync(join(dir, '.env'));
    expect(problemOf(() => withEnvFile({}, dir))?.message).toContain('cannot be read (EISDIR)');
  });
});
