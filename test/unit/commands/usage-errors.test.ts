import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseResources } from '../../../src/commands/sync.js';
import { main } from '../../../src/main.js';
import { captureIo } from '../../support/capture-io.js';

/** A complete configuration whose servers do not exist. */
const ENV = {
  HIRESYNC_BASE_URL: 'https://x.example',
  HIRESYNC_API_KEY: 'k',
  DATABASE_URL: 'postgres://nobody@127.0.0.1:1/x',
  REDIS_URL: 'redis://127.0.0.1:1',
};

let connect: ReturnType<typeof vi.spyOn>;
beforeEach(() => {
  connect = vi.spyOn(net.Socket.prototype, 'connect');
});
afterEach(() => {
  expect(connect, 'no connection was attempted').not.toHaveBeenCalled();
  connect.mockRestore();
});

async function run(argv: string[], env: Record<string, string> = ENV) {
  const io = captureIo();
  const code = await main(argv, env, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

describe('usage and configuration errors, in process', () => {
  it('sync --resource with an empty name exits 2 naming the choices, without connecting', async () => {
    for (const value of ['', 'jobs,']) {
      expect(await run(['sync', '--resource', value])).toEqual({
        code: 2,
        stdout: '',
        stderr:
          'hiresync: --resource was given an empty resource name; choose from jobs, job_posts, tracking_links, job_boards, sources, referrers (HIRESYNC_RESOURCES)\n',
      });
    }
  });

  it('sync --resource with a name that cannot be a resource exits 2', async () => {
    const result = await run(['sync', '--resource', 'Candidates!']);
    expect(result).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('"Candidates!" is not a resource name'),
    });
  });

  it('sync --resource with a name that is not a configured resource exits 2 naming it and the configured ones, without connecting', async () => {
    expect(await run(['sync', '--resource', 'jobs,applications'])).toEqual({
      code: 2,
      stdout: '',
      stderr:
        "hiresync: --resource applications is not a configured resource; HIRESYNC_RESOURCES has jobs, job_posts, tracking_links, job_boards, sources, referrers (add it there or to an account's --resources, or give it a path in HIRESYNC_RESOURCE_PATHS, to sync it)\n",
    });
    const typo = await run(['sync', '--resource', 'jbos'], {
      ...ENV,
      HIRESYNC_RESOURCES: 'jobs,applications',
    });
    expect(typo).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        '--resource jbos is not a configured resource; HIRESYNC_RESOURCES has jobs, applications',
      ),
    });
  });

  it('sync --resource takes a built-in resource or one given a path beyond HIRESYNC_RESOURCES', () => {
    expect(parseResources(['tracking_links', 'offers'], ['jobs'], ['offers'])).toEqual([
      'tracking_links',
      'offers',
    ]);
  });

  it('sync and worker with neither the environment credentials nor HIRESYNC_SECRET_KEY exit 2 naming what to set, without connecting', async () => {
    const { HIRESYNC_API_KEY: _, ...noCredentials } = ENV;
    for (const command of ['sync', 'worker']) {
      for (const env of [
        noCredentials,
        {
          ...noCredentials,
          HIRESYNC_PARTNER_CLIENT_ID: 'p',
          HIRESYNC_PARTNER_CLIENT_SECRET: 's',
          HIRESYNC_AUTH_URL: 'https://auth.example',
        },
      ]) {
        const result = await run([command], env);
        expect(result.code, command).toBe(2);
        expect(result.stderr.trimEnd().split('\n'), command).toHaveLength(1);
        for (const name of [
          'HIRESYNC_CLIENT_ID',
          'HIRESYNC_CLIENT_SECRET',
          'HIRESYNC_API_KEY',
          'HIRESYNC_SECRET_KEY',
          'accounts add',
        ]) {
          expect(result.stderr, `${command}: ${name}`).toContain(name);
        }
      }
    }
  });

  it('sync --account default without the environment credentials is a usage error saying there is no account default, without connecting', async () => {
    const { HIRESYNC_API_KEY: _, ...noCredentials } = ENV;
    const result = await run(['sync', '--account', 'default'], {
      ...noCredentials,
      HIRESYNC_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
    });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr:
        "hiresync: there is no account default: the environment sets no credentials (HIRESYNC_CLIENT_ID and HIRESYNC_CLIENT_SECRET, or HIRESYNC_API_KEY); name a registered account (see 'hiresync accounts list')\n",
    });
  });

  it('sync --allow-mass-delete without --full exits 2', async () => {
    const result = await run(['sync', '--allow-mass-delete']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('use it with --full');
  });

  it('an unknown command, an unknown option or a stray argument exits 2', async () => {
    expect(await run(['frobnicate'])).toMatchObject({
      code: 2,
      stderr: 'hiresync: unknown command "frobnicate"; run \'hiresync --help\'\n',
    });
    for (const argv of [
      ['migrate', '--bogus'],
      ['status', 'extra'],
      ['simulate', '--port'],
    ]) {
      const result = await run(argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stderr, argv.join(' ')).toMatch(/^hiresync: /);
    }
  });

  it('bad option values of simulate and demo exit 2 before anything starts', async () => {
    for (const [argv, message] of [
      [['simulate', '--host', '10.0.0.1'], '--host must be a loopback address'],
      [['simulate', '--port', 'x'], '--port takes a whole number >= 0, got "x"'],
      [['simulate', '--rate-limit', '5'], '--rate-limit takes N/WINDOW such as 50/10s'],
      [['simulate', '--fault-rate', '2'], '--fault-rate takes a probability from 0 to 1'],
      [['simulate', '--token-ttl', '0'], '--token-ttl takes a whole number >= 1'],
      [['demo', '--records', '0'], '--records takes a whole number >= 1'],
    ] as const) {
      const result = await run([...argv]);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stderr, argv.join(' ')).toContain(message);
    }
  });

  it('a configuration error exits 2 naming every variable, from the env given, not the process', async () => {
    const result = await run(['sync'], { HIRESYNC_BASE_URL: 'http://example.com' });
    expect(result.code).toBe(2);
    for (const name of ['HIRESYNC_BASE_URL', 'DATABASE_URL', 'REDIS_URL', 'HIRESYNC_CLIENT_ID']) {
      expect(result.stderr).toContain(name);
    }
    expect((await run(['migrate'], {})).stderr).toMatch(/DATABASE_URL: is required/);
    expect((await run(['status'], { DATABASE_URL: ENV.DATABASE_URL })).stderr).toMatch(
      /REDIS_URL: is required/,
    );
  });
});
