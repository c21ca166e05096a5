import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SUBCOMMANDS } from '../../../src/commands/accounts/index.js';
import { main } from '../../../src/main.js';
import { captureIo } from '../../support/capture-io.js';

/** A configuration whose servers do not exist: nothing here may connect. */
const ENV = {
  DATABASE_URL: 'postgres://nobody@127.0.0.1:1/x',
  REDIS_URL: 'redis://127.0.0.1:1',
  HIRESYNC_BASE_URL: 'https://api.example.com',
  HIRESYNC_AUTH_URL: 'https://auth.example.com',
  HIRESYNC_SECRET_KEY: randomBytes(32).toString('base64'),
};

let connect: ReturnType<typeof vi.spyOn>;
beforeEach(() => {
  connect = vi.spyOn(net.Socket.prototype, 'connect');
});
afterEach(() => {
  expect(connect, 'no connection was attempted').not.toHaveBeenCalled();
  connect.mockRestore();
});

async function run(argv: string[], env: Record<string, string> = ENV, input = 'the-secret-1\n') {
  const io = captureIo(input);
  const code = await main(['accounts', ...argv], env, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

describe('hiresync accounts: usage and configuration errors, before connecting', () => {
  it('refuses a NAME that is uppercase, reserved, pg_-prefixed or longer than 40 with exit 2 and one line', async () => {
    for (const [name, rule] of [
      ['Acme', 'must be 1 to 40 lowercase letters'],
      ['default', 'is reserved'],
      ['public', 'is reserved'],
      ['pg_x', 'is reserved'],
      ['a'.repeat(41), 'must be 1 to 40 lowercase letters'],
      ['1acme', 'starting with a letter'],
    ] as const) {
      const result = await run(['add', name, '--client-id', 'c']);
      expect(result.code, name).toBe(2);
      expect(result.stderr, name).toContain(rule);
      expect(result.stderr.trimEnd().split('\n'), name).toHaveLength(1);
    }
  });

  it('explains that default is the environment account to disable, enable and remove', async () => {
    for (const sub of ['disable', 'enable', 'remove']) {
      const result = await run([sub, 'default']);
      expect(result.code, sub).toBe(2);
      expect(result.stderr, sub).toContain("the account default is the environment's credentials");
    }
  });

  it('refuses a bad --resources, --incremental-every or --full-cron of add and update with exit 2 naming the option', async () => {
    for (const sub of [
      ['add', 'acme', '--client-id', 'c'],
      ['update', 'acme'],
    ]) {
      for (const [option, value, message] of [
        [
          '--resources',
          'jobs,kysely_migration',
          "kysely_migration is the name of one of hiresync's own tables",
        ],
        ['--resources', 'Jobs', '"Jobs" is not a resource name'],
        ['--incremental-every', 'soon', 'is not a duration like 30s, 15m or 1h: "soon"'],
        ['--incremental-every', '0.5s', 'must be from 1s to'],
        ['--full-cron', '61 * * * *', 'is not a valid cron pattern'],
        ['--full-cron', '', 'was given an empty value'],
      ] as const) {
        const result = await run([...sub, option, value]);
        expect(result.code, `${sub[0]} ${option} ${value}`).toBe(2);
        expect(result.stderr.startsWith(`hiresync: ${option}: `), result.stderr).toBe(true);
        expect(result.stderr, `${sub[0]} ${option} ${value}`).toContain(message);
      }
    }
  });

  it('refuses add without HIRESYNC_SECRET_KEY with exit 2 naming the variable', async () => {
    const { HIRESYNC_SECRET_KEY: _, ...env } = ENV;
    const result = await run(['add', 'acme', '--client-id', 'c'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^hiresync: invalid configuration: HIRESYNC_SECRET_KEY: is required/,
    );
  });

  it('refuses a malformed HIRESYNC_SECRET_KEY without quoting it', async () => {
    const result = await run(['add', 'acme', '--api-key'], {
      ...ENV,
      HIRESYNC_SECRET_KEY: 'short-key-value',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('HIRESYNC_SECRET_KEY: key 1 of 1 is not 32 bytes');
    expect(result.stderr).not.toContain('short-key-value');
  });

  it('asks for exactly one auth mode, and --partner for the partner app', async () => {
    expect(await run(['add', 'acme'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('say how account acme authenticates'),
    });
    expect(await run(['add', 'acme', '--client-id', 'c', '--api-key'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('not --client-id and --api-key'),
    });
    expect(await run(['add', 'acme', '--partner'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('HIRESYNC_PARTNER_CLIENT_ID: is required'),
    });
  });

  it('refuses a non-numeric --sub, and --sub or --auth-url without client credentials', async () => {
    expect(await run(['add', 'acme', '--client-id', 'c', '--sub', '12a'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--sub must be a numeric user id'),
    });
    expect(await run(['add', 'acme', '--api-key', '--sub', '12'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--sub applies only to client credentials'),
    });
    expect(
      await run(['add', 'acme', '--api-key', '--auth-url', 'https://a.example']),
    ).toMatchObject({ code: 2, stderr: expect.stringContaining('--auth-url applies only') });
  });

  it('applies the https rule to --base-url, --auth-url and the variables they default to', async () => {
    const flag = await run([
      'add',
      'acme',
      '--client-id',
      'c',
      '--base-url',
      'http://api.example.com',
    ]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--base-url: must use https://');
    const variable = await run(['add', 'acme', '--client-id', 'c'], {
      ...ENV,
      HIRESYNC_AUTH_URL: 'http://auth.example.com',
    });
    expect(variable.code).toBe(2);
    expect(variable.stderr).toContain('HIRESYNC_AUTH_URL: must use https://');
  });

  it('exits 2 when standard input holds no secret, and never takes one from the arguments', async () => {
    for (const input of ['', '\n', '   \n']) {
      const result = await run(['add', 'acme', '--api-key'], ENV, input);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('no API key on standard input');
    }
    const argument = await run(['add', 'acme', '--api-key', 'the-key-itself']);
    expect(argument.code).toBe(2);
    expect(argument.stderr).toContain('takes one account NAME, got 2');
    expect(argument.stderr).not.toContain('the-key-itself');
  });

  it('needs REDIS_URL for disable and remove, and a NAME for each subcommand of one account', async () => {
    const { REDIS_URL: _, ...env } = ENV;
    for (const sub of ['disable', 'remove']) {
      const result = await run([sub, 'acme'], env);
      expect(result.code, sub).toBe(2);
      expect(result.stderr, sub).toContain('REDIS_URL: is required');
    }
    for (const sub of ['add', 'update', 'disable', 'enable', 'remove']) {
      const result = await run([sub]);
      expect(result.code, sub).toBe(2);
      expect(result.stderr, sub).toContain(`needs the account's NAME`);
    }
    expect((await run(['list', 'acme'])).code).toBe(2);
    expect((await run(['rekey'], { DATABASE_URL: ENV.DATABASE_URL })).code).toBe(2);
  });

  it('test and add (unless --no-test) need REDIS_URL, test a key for a registered account: exit 2 naming them', async () => {
    const { REDIS_URL: _, ...withoutRedis } = ENV;
    for (const argv of [
      ['test', 'acme'],
      ['test', 'default'],
      ['add', 'acme', '--api-key'],
    ]) {
      const result = await run(argv, withoutRedis);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stderr, argv.join(' ')).toContain('REDIS_URL: is required');
    }
    const { HIRESYNC_SECRET_KEY: __, ...withoutKey } = ENV;
    expect(await run(['test', 'acme'], withoutKey)).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        'HIRESYNC_SECRET_KEY: is required to test account acme (its credentials are sealed with it)',
      ),
    });
    expect(await run(['test', 'Acme'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('must be 1 to 40 lowercase letters'),
    });
    expect(await run(['test'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("needs the account's NAME"),
    });
  });

  it('remove takes --yes and --cascade only with --drop-data', async () => {
    for (const flag of ['--yes', '--cascade']) {
      const result = await run(['remove', 'acme', flag]);
      expect(result.code, flag).toBe(2);
      expect(result.stderr, flag).toContain(`${flag} applies only with --drop-data`);
    }
  });

  it('update exits 2, before connecting, with nothing to update, a bad --sub or a URL breaking the https rule', async () => {
    expect(await run(['update', 'acme'], ENV, '')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('nothing to update for account acme'),
    });
    expect(await run(['update', 'acme', '--sub', 'x1'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--sub must be a numeric user id'),
    });
    expect(await run(['update', 'acme', '--base-url', 'http://api.example.com'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--base-url: must use https://'),
    });
    const { HIRESYNC_SECRET_KEY: _, ...env } = ENV;
    expect(await run(['update', 'acme'], env)).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('HIRESYNC_SECRET_KEY: is required'),
    });
    const secret = await run(['update', 'default']);
    expect(secret.code).toBe(2);
    expect(secret.stderr).not.toContain('the-secret-1');
  });

  it('answers an unknown subcommand or option with exit 2', async () => {
    expect(await run(['frobnicate'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('unknown subcommand accounts "frobnicate"'),
    });
    expect((await run(['list', '--bogus'])).code).toBe(2);
  });
});

describe('hiresync accounts help', () => {
  it('lists every subcommand with its operand and summary; no subcommand prints it and exits 2', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout.startsWith('usage: hiresync accounts SUBCOMMAND [NAME]')).toBe(true);
    for (const sub of SUBCOMMANDS) {
      const term = sub.operand ? `${sub.name} ${sub.operand}` : sub.name;
      expect(help.stdout).toMatch(new RegExp(`^  ${term} {2,}`, 'm'));
    }
    const bare = await run([]);
    expect(bare).toMatchObject({ code: 2, stdout: help.stdout });
  });

  it.each(SUBCOMMANDS.map((s) => [s.name, s] as const))(
    'accounts %s --help shows its usage line and every option, within 80 columns',
    async (name, entry) => {
      const sub = await entry.load();
      expect({ name: sub.name, operand: sub.operand }).toEqual({ name, operand: entry.operand });
      const { code, stdout } = await run([name, '--help']);
      expect(code).toBe(0);
      expect(
        stdout.startsWith(`usage: hiresync accounts ${name}${sub.operand ? ' NAME' : ''}`),
      ).toBe(true);
      for (const [option, spec] of Object.entries(sub.options)) {
        const flag = spec.type === 'string' ? `--${option} ${spec.value}` : `--${option}`;
        expect(stdout, option).toContain(`[${flag}]`);
      }
      for (const line of stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    },
  );
});
