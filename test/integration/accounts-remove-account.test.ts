import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { pendingRemoval } from '../../src/accounts/account-keys.js';
import { AccountStore } from '../../src/accounts/account-store.js';
import { checkNewAccount, registerAccount } from '../../src/accounts/register-account.js';
import type { DropQuestion } from '../../src/accounts/removal-request.js';
import { type RemovalPorts, removeAccount } from '../../src/accounts/remove-account.js';
import { deletePrefix } from '../../src/queue/redis.js';
import { Secret } from '../../src/secret.js';
import { keysOf } from '../support/accounts-cli.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

// `removeAccount` called as a function: the CLI, its options and its output
// are accounts-cli.test.ts's; here, what each outcome is and what it changed.
let t: TestDatabase;
let redis: Redis;
let prefix: string;
let store: AccountStore;
/** The accounts whose schedulers the removal deleted, in order. */
let schedulersRemoved: string[];

beforeEach(async () => {
  t = await createTestDatabase(inject('databaseUrl'));
  redis = new Redis(inject('redisUrl'));
  prefix = `test-${randomUUID()}`;
  store = new AccountStore(t.db, keysOf(Buffer.alloc(32, 7).toString('base64')));
  schedulersRemoved = [];
});
afterEach(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
  await t.drop();
});

function ports(overrides: Partial<RemovalPorts> = {}): RemovalPorts {
  return {
    db: t.db,
    store,
    redis,
    prefix,
    removeSchedulers: async (account) => {
      schedulersRemoved.push(account);
      return [`incremental:${account}:jobs`];
    },
    defaultNamespace: undefined,
    ...overrides,
  };
}

async function register(name: string) {
  const owner = await checkNewAccount(t.db, store, name);
  const added = await registerAccount(
    t.db,
    store,
    name,
    owner,
    () =>
      store.add({
        name,
        baseUrl: 'https://api.example.com/harvest',
        auth: {
          mode: 'client_credentials',
          authUrl: 'https://auth.example.com/oauth',
          clientId: `${name}-client`,
          clientSecret: new Secret(`secret-${randomUUID()}`),
        },
      }),
    () => {},
  );
  await redis.set(`${prefix}:checkpoint:${name}:jobs`, '{}');
  return added;
}

async function schemaExists(schema: string): Promise<boolean> {
  const { rows } = await sql`select 1 from pg_namespace where nspname = ${schema}`.execute(t.db);
  return rows.length > 0;
}

const keep = { dropData: false, cascade: false, consent: 'yes' } as const;
const drop = { dropData: true, cascade: false, consent: 'yes' } as const;

describe('removeAccount of a registered account', () => {
  it('unregisters it, keeps its schema, and cleans Redis after the commit', async () => {
    await register('acme');
    const outcome = await removeAccount(ports(), { name: 'acme', ...keep });
    expect(outcome).toMatchObject({
      kind: 'removed',
      account: { name: 'acme', schema: 'acme' },
      dropData: false,
      cascaded: [],
      cleaned: { schedulers: 1, keys: 1 },
    });
    expect(await store.get('acme')).toBeUndefined();
    expect(await schemaExists('acme')).toBe(true);
    expect(await redis.exists(`${prefix}:checkpoint:acme:jobs`)).toBe(0);
    expect(await pendingRemoval(redis, prefix, 'acme')).toBeUndefined();
    expect(schedulersRemoved).toEqual(['acme']);
  });

  it('with dropData and consent, drops its schema too', async () => {
    await register('acme');
    const outcome = await removeAccount(ports(), { name: 'acme', ...drop });
    expect(outcome).toMatchObject({ kind: 'removed', dropData: true });
    expect(await schemaExists('acme')).toBe(false);
  });

  it('asks before dropping, with the counts of the schema, and a no changes nothing', async () => {
    await register('acme');
    const asked: DropQuestion[] = [];
    const outcome = await removeAccount(ports(), {
      name: 'acme',
      ...drop,
      consent: async (question) => {
        asked.push(question);
        return false;
      },
    });
    expect(outcome).toEqual({ kind: 'not confirmed', of: 'account', name: 'acme' });
    expect(asked).toEqual([
      expect.objectContaining({ of: 'account', name: 'acme', schema: 'acme', cascade: [] }),
    ]);
    expect(asked[0]).toMatchObject({ tables: expect.any(Number), rows: expect.any(Number) });
    expect(asked[0]?.of === 'account' && asked[0].tables).toBeGreaterThan(0);
    expect(await store.get('acme')).toBeDefined();
    expect(await schemaExists('acme')).toBe(true);
    expect(schedulersRemoved).toEqual([]);
  });

  it('refuses to drop without a terminal to ask on, changing nothing', async () => {
    await register('acme');
    const outcome = await removeAccount(ports(), {
      name: 'acme',
      ...drop,
      consent: 'no terminal',
    });
    expect(outcome).toEqual({
      kind: 'no terminal',
      of: 'account',
      name: 'acme',
      dropping: 'schema acme',
    });
    expect(await store.get('acme')).toBeDefined();
    expect(await redis.exists(`${prefix}:checkpoint:acme:jobs`)).toBe(1);
  });

  it("refuses to drop a schema an analyst's view depends on unless cascade, which drops the view too", async () => {
    await register('acme');
    await sql`create schema reporting`.execute(t.db);
    await sql`create view reporting.acme_jobs as select id from acme.jobs`.execute(t.db);
    const refused = await removeAccount(ports(), { name: 'acme', ...drop });
    expect(refused).toEqual({
      kind: 'dependents',
      of: 'account',
      name: 'acme',
      schema: 'acme',
      objects: ['view reporting.acme_jobs'],
    });
    expect(await store.get('acme')).toBeDefined();
    const cascaded = await removeAccount(ports(), { name: 'acme', ...drop, cascade: true });
    expect(cascaded).toMatchObject({ kind: 'removed', cascaded: ['view reporting.acme_jobs'] });
    expect(await schemaExists('acme')).toBe(false);
  });
});

describe('removeAccount resumed after phase one', () => {
  it('a failed Redis cleanup leaves it unfinished, and removing the name again finishes it', async () => {
    await register('acme');
    const failing = ports({
      removeSchedulers: async () => {
        throw new Error('Redis refused');
      },
    });
    const first = await removeAccount(failing, { name: 'acme', ...drop });
    expect(first).toMatchObject({ kind: 'unfinished', dropData: true });
    expect(first.kind === 'unfinished' && first.error.message).toBe('Redis refused');
    // Phase one committed: unregistered, schema dropped; the record of phase two kept.
    expect(await store.get('acme')).toBeUndefined();
    expect(await schemaExists('acme')).toBe(false);
    expect(await pendingRemoval(redis, prefix, 'acme')).toEqual({
      namespace: expect.any(String),
      dropData: true,
    });
    // Again, as a script would run it without a terminal: dropping nothing, it needs no consent.
    const again = await removeAccount(ports(), {
      name: 'acme',
      ...drop,
      consent: 'no terminal',
    });
    expect(again).toEqual({
      kind: 'finished',
      name: 'acme',
      cleaned: { schedulers: 1, keys: 1 },
      droppedEarlier: true,
    });
    expect(await pendingRemoval(redis, prefix, 'acme')).toBeUndefined();
    expect(await redis.exists(`${prefix}:checkpoint:acme:jobs`)).toBe(0);
  });

  it('finishing a removal that kept the data, with dropData, then drops what it left', async () => {
    await register('acme');
    const failing = ports({
      removeSchedulers: async () => {
        throw new Error('Redis refused');
      },
    });
    expect(await removeAccount(failing, { name: 'acme', ...keep })).toMatchObject({
      kind: 'unfinished',
    });
    expect(await schemaExists('acme')).toBe(true);
    const again = await removeAccount(ports(), { name: 'acme', ...drop });
    expect(again).toMatchObject({
      kind: 'finished',
      droppedEarlier: false,
      leftData: { kind: 'left data dropped', name: 'acme', what: 'schema acme', cascaded: [] },
    });
    expect(await schemaExists('acme')).toBe(false);
  });
});

describe('removeAccount of a name no account has', () => {
  it('is unknown when nothing of it is stored', async () => {
    expect(await removeAccount(ports(), { name: 'acme', ...keep })).toEqual({
      kind: 'unknown',
      name: 'acme',
    });
    expect(await removeAccount(ports(), { name: 'acme', ...drop })).toEqual({
      kind: 'unknown',
      name: 'acme',
    });
  });

  it('names the rows an earlier registration left, and drops them with dropData', async () => {
    await register('acme');
    await sql`insert into acme.jobs (id, data) values (1, '{}')`.execute(t.db);
    await removeAccount(ports(), { name: 'acme', ...keep });
    expect(await removeAccount(ports(), { name: 'acme', ...keep })).toEqual({
      kind: 'left data',
      name: 'acme',
      stored: [{ table: 'jobs', rows: 1 }],
    });
    const asked: DropQuestion[] = [];
    const dropped = await removeAccount(ports(), {
      name: 'acme',
      ...drop,
      consent: async (question) => {
        asked.push(question);
        return true;
      },
    });
    expect(asked).toEqual([
      { of: 'left data', name: 'acme', what: 'schema acme and 1 jobs', cascade: [] },
    ]);
    expect(dropped).toEqual({
      kind: 'left data dropped',
      name: 'acme',
      what: 'schema acme and 1 jobs',
      cascaded: [],
      schemaLeftAlone: false,
    });
    expect(await removeAccount(ports(), { name: 'acme', ...keep })).toEqual({
      kind: 'unknown',
      name: 'acme',
    });
  });
});
