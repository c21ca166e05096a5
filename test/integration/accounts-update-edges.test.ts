import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { AccountStore } from '../../src/accounts/account-store.js';
import { refreshLockKey } from '../../src/accounts/refresh-token-vault.js';
import type { Input } from '../../src/commands/command.js';
import { parseSecretKeys, SecretKeys } from '../../src/config/secret-keys.js';
import { main } from '../../src/main.js';
import { deletePrefix } from '../../src/queue/redis.js';
import type { Secret } from '../../src/secret.js';
import { createDatabase } from '../../src/warehouse/database.js';
import { runAccounts } from '../support/accounts-cli.js';
import { captureIo } from '../support/capture-io.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { seenBefore } from '../support/seen-before.js';

const CLIENT_SECRET = `client-secret-${randomUUID()}`;
const KEY = Buffer.alloc(32, 7).toString('base64');
// These tests are about `accounts update` on registered accounts whose URLs nothing
// answers at: every `accounts add` passes --no-test (the test of an account's
// credentials is covered by accounts-test.test.ts).
let t: TestDatabase;
let redis: Redis;
let prefix: string;
let env: Record<string, string>;

beforeEach(async () => {
  t = await createTestDatabase(inject('databaseUrl'));
  redis = new Redis(inject('redisUrl'));
  prefix = `test-${randomUUID()}`;
  env = {
    DATABASE_URL: t.url,
    REDIS_URL: inject('redisUrl'),
    HIRESYNC_REDIS_PREFIX: prefix,
    HIRESYNC_SECRET_KEY: KEY,
    HIRESYNC_BASE_URL: 'https://api.example.com/harvest',
    HIRESYNC_AUTH_URL: 'https://auth.example.com/oauth',
    HIRESYNC_PARTNER_CLIENT_ID: 'partner-app',
    HIRESYNC_PARTNER_CLIENT_SECRET: 'partner-app-secret',
  };
});
afterEach(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
  await t.drop();
});

function accounts(argv: string[], input = '') {
  return runAccounts(env, argv, input);
}

function keys(): SecretKeys {
  const parsed = parseSecretKeys(KEY);
  if (!('keys' in parsed)) throw new Error(parsed.problem);
  return new SecretKeys(parsed.keys);
}

describe('accounts update with options', () => {
  it('keeps the stored secret when standard input is a pipe holding something else (a shell loop reading a list of accounts)', async () => {
    expect(
      await accounts(
        ['add', '--no-test', 'acme', '--client-id', 'acme-client', '--sub', '42'],
        `${CLIENT_SECRET}\n`,
      ),
    ).toMatchObject({ code: 0 });
    // while read name; do hiresync accounts update "$name" --sub 7; done < accounts.txt
    const r = await accounts(['update', 'acme', '--sub', '7'], 'beta\ngamma\n');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toContain('updated account acme: sub;');
    const resolved = await new AccountStore(t.db, keys()).resolve('acme');
    const auth = resolved.auth as { clientSecret: Secret; sub?: string };
    expect(auth.sub).toBe('7');
    expect(auth.clientSecret.reveal()).toBe(CLIENT_SECRET);
  });

  it('never reads standard input without --secret: a pipe that never ends is not waited on, and none of its lines is taken', async () => {
    expect(
      await accounts(
        ['add', '--no-test', 'acme', '--client-id', 'acme-client'],
        `${CLIENT_SECRET}\n`,
      ),
    ).toMatchObject({ code: 0 });
    let pulled = 0;
    const endless: Input = {
      [Symbol.asyncIterator]: () => ({
        next: () => {
          pulled += 1;
          return new Promise<IteratorResult<string>>(() => {});
        },
      }),
    };
    const io = { ...captureIo(), stdin: endless };
    const code = await main(['accounts', 'update', 'acme', '--sub', '7'], env, io);
    expect({ code, err: io.err(), pulled }).toEqual({ code: 0, err: '', pulled: 0 });
  });

  it('with --secret reads the new secret from standard input besides the options, and exits 2 changing nothing when it is empty', async () => {
    expect(
      await accounts(
        ['add', '--no-test', 'acme', '--client-id', 'acme-client', '--sub', '42'],
        `${CLIENT_SECRET}\n`,
      ),
    ).toMatchObject({ code: 0 });
    const empty = await accounts(['update', 'acme', '--sub', '7', '--secret'], '');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('--secret: no new secret for account acme on standard input');
    const unchanged = await new AccountStore(t.db, keys()).resolve('acme');
    expect(unchanged.auth).toMatchObject({ sub: '42' });

    const r = await accounts(['update', 'acme', '--sub', '7', '--secret'], 'new-secret\n');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toContain('updated account acme: client secret, sub;');
    expect(r.stdout).not.toContain('new-secret');
    const resolved = await new AccountStore(t.db, keys()).resolve('acme');
    const auth = resolved.auth as { clientSecret: Secret; sub?: string };
    expect(auth.sub).toBe('7');
    expect(auth.clientSecret.reveal()).toBe('new-secret');
  });
});

describe("accounts update of an account of the live service's", () => {
  it('refuses to move it to another API keeping the live token service, unless --auth-url names one', async () => {
    // The live service by default: no URL set.
    delete env.HIRESYNC_BASE_URL;
    delete env.HIRESYNC_AUTH_URL;
    const add = ['add', '--no-test', 'acme', '--client-id', 'acme-client'];
    expect(await accounts(add, `${CLIENT_SECRET}\n`)).toMatchObject({ code: 0 });
    const proxy = 'https://proxy.example.com/harvest';
    const moved = await accounts(
      ['update', 'acme', '--base-url', proxy, '--secret'],
      'proxy-secret\n',
    );
    expect(moved.code).not.toBe(0);
    expect(moved.stderr).toContain('--auth-url');
    expect(moved.stderr).not.toContain('proxy-secret');
    const kept = await new AccountStore(t.db, keys()).resolve('acme');
    expect(kept.baseUrl).toBe('https://harvest.greenhouse.io');
    expect((kept.auth as { clientSecret: Secret }).clientSecret.reveal()).toBe(CLIENT_SECRET);

    const named = ['update', 'acme', '--base-url', proxy, '--auth-url', 'https://auth.example.com'];
    expect(await accounts(named)).toMatchObject({ code: 0 });
    const kept2 = [
      'update',
      'acme',
      '--base-url',
      proxy,
      '--auth-url',
      'https://auth.greenhouse.io',
    ];
    expect(await accounts(kept2)).toMatchObject({ code: 0 });
  });
});

describe('accounts update of a partner account while a worker refresh is being refused', () => {
  it('takes the refresh lock before the account row, as authorize and the vault do (no deadlock)', async () => {
    expect(
      await accounts(['add', '--no-test', 'gamma', '--partner'], 'refresh-token-1\n'),
    ).toMatchObject({
      code: 0,
    });
    // A second connection plays the vault: refresh lock held, then the refusal's update of the account row.
    const vault = createDatabase(t.url);
    try {
      const result = await vault.connection().execute(async (conn) => {
        await sql`select pg_advisory_lock(${refreshLockKey('gamma').toString()}::bigint)`.execute(
          conn,
        );
        const update = accounts(['update', 'gamma'], 'refresh-token-2\n');
        // Until update waits for the refresh lock (taking the account row first, it deadlocked below);
        // an update that ended first never raced the vault.
        const waited = await seenBefore(update, async () => {
          const { rows } = await sql<{ n: number }>`
            select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted
              and database = (select oid from pg_database where datname = current_database())`.execute(
            conn,
          );
          return (rows[0]?.n ?? 0) > 0;
        });
        let vaultError: unknown;
        await sql`update hiresync.accounts set state = 'needs_reauthorization' where name = 'gamma' and state = 'enabled'`
          .execute(conn)
          .catch((e) => {
            vaultError = e;
          });
        await sql`select pg_advisory_unlock_all()`.execute(conn);
        return {
          waited,
          update: await update,
          vaultError: (vaultError as Error | undefined)?.message,
        };
      });
      expect(result.waited, 'the update never waited for the refresh lock').toBe(true);
      expect(result.vaultError).toBeUndefined();
      expect(result.update.stderr).not.toContain('deadlock');
      expect(result.update.code).toBe(0);
      // The update, waiting behind the refresh lock, found the refusal's state and enabled the account.
      expect(result.update.stdout).toContain('it no longer needs reauthorization and is enabled');
      // The refusal came first; the new refresh token, stored after it, enables the account.
      expect(await new AccountStore(t.db).get('gamma')).toMatchObject({ state: 'enabled' });
    } finally {
      await vault.destroy();
    }
  });
});

describe('accounts update of an enabled partner account with a new refresh token', () => {
  it("changes the account's version, so that a running worker drops the access token of the old grant it holds in memory", async () => {
    expect(
      await accounts(['add', '--no-test', 'gamma', '--partner'], 'refresh-token-1\n'),
    ).toMatchObject({
      code: 0,
    });
    const before = await t.db
      .selectFrom('hiresync.accounts')
      .select('version')
      .where('name', '=', 'gamma')
      .executeTakeFirstOrThrow();
    const r = await accounts(['update', 'gamma'], 'refresh-token-2\n');
    expect(r.stdout).toContain('its next run mints a new access token');
    const after = await t.db
      .selectFrom('hiresync.accounts')
      .select('version')
      .where('name', '=', 'gamma')
      .executeTakeFirstOrThrow();
    // app.ts contextOf keeps an account's ApiClient (and its TokenProvider's in-memory token) while the version is the same.
    expect(after.version).not.toBe(before.version);
  });
});
