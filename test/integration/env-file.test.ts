// Every command reads .env from its working directory, the environment
// winning over the file (the built CLI, in a folder holding a .env).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type CliResult, runCli } from '../support/run-cli.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The built CLI run in a folder whose .env holds `text`, with exactly `env` (plus PATH). */
function runIn(text: string, args: string[], env: Record<string, string>): Promise<CliResult> {
  const dir = mkdtempSync(join(tmpdir(), 'hiresync-dotenv-'));
  dirs.push(dir);
  writeFileSync(join(dir, '.env'), text);
  return runCli(args, env, 60_000, { cwd: dir, exactEnv: true });
}

describe('hiresync reads .env', () => {
  it('takes the variables of .env, those of the environment winning, before connecting anywhere', async () => {
    const result = await runIn(
      [
        '# what sync reads, but REDIS_URL',
        'DATABASE_URL=postgres://nobody@127.0.0.1:1/x',
        'HIRESYNC_BASE_URL=http://127.0.0.1:9',
        'HIRESYNC_CLIENT_ID=from-file',
        'HIRESYNC_CLIENT_SECRET=from-file',
        'HIRESYNC_PER_PAGE=999',
        'HIRESYNC_INCREMENTAL_EVERY=often',
      ].join('\n'),
      ['sync'],
      { HIRESYNC_PER_PAGE: '100' },
    );
    expect(result.code).toBe(2);
    // From the file: the bad value is reported, the URLs and credentials are taken.
    expect(result.stderr).toContain('HIRESYNC_INCREMENTAL_EVERY');
    expect(result.stderr).toContain('REDIS_URL: is required');
    expect(result.stderr).not.toContain('DATABASE_URL');
    expect(result.stderr).not.toContain('HIRESYNC_CLIENT_ID');
    // From the environment, over the file's 999.
    expect(result.stderr).not.toContain('HIRESYNC_PER_PAGE');
  });

  it('exits 2 naming a malformed .env, and runs nothing', async () => {
    const result = await runIn(
      'DATABASE_URL=postgres://nobody@127.0.0.1:1/x\nmigrate now\n',
      ['migrate'],
      {},
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /hiresync: invalid configuration: \/\S+\/\.env: line 2 sets no variable/,
    );
    expect(result.stdout).toBe('');
  });
});
