import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { main } from '../../src/main.js';
import { deletePrefix } from '../../src/queue/redis.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { captureIo } from '../unit/commands/capture-io.js';

const CLIENT_SECRET = `client-secret-${randomUUID()}`;
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
    HIRESYNC_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
    HIRESYNC_BASE_URL: 'https://api.example.com/harvest',
    HIRESYNC_AUTH_URL: 'https://auth.example.com/oauth',
  };
});
afterEach(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
  await t.drop();
});

async function accounts(argv: string[], input = '') {
  const io = captureIo(input);
  const code = await main(['accounts', ...argv], env, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

async function add(name: string) {
  const r = await accounts(
    ['add', name, '--client-id', `${name}-client`, '--sub', '42'],
    `${CLIENT_SECRET}\n`,
  );
  expect(r).toMatchObject({ code: 0, stderr: '' });
}

describe('accounts remove --drop-data with an analyst view inside schema all_accounts', () => {
  it('names it before asking and --cascade can drop it', async () => {
    await add('acme');
    await sql`create view all_accounts.acme_only as select id from acme.jobs`.execute(t.db);
    const plain = await accounts(['remove', 'acme', '--drop-data', '--yes']);
    const cascaded = await accounts(['remove', 'acme', '--drop-data', '--yes', '--cascade']);
    console.log('PLAIN', plain, '\nCASCADE', cascaded);
    expect(plain.code).toBe(1);
    expect(cascaded.code).toBe(0);
  });
});
