import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { PrivateRedisCluster } from '../support/redis-cluster.js';
import { runCli } from '../support/run-cli.js';
import { newRedisPrefix, newSecretKey } from '../support/test-env.js';

const PASSWORD = 'cluster-node-password-0123';

let cluster: PrivateRedisCluster;
let database: TestDatabase;

const envWith = (redisUrl: string) => ({
  DATABASE_URL: database.url,
  REDIS_URL: redisUrl,
  HIRESYNC_REDIS_PREFIX: newRedisPrefix(),
  HIRESYNC_SECRET_KEY: newSecretKey(),
});

beforeAll(async () => {
  cluster = await PrivateRedisCluster.start({ password: PASSWORD });
  database = await createTestDatabase(inject('databaseUrl'));
}, 120_000);

afterAll(async () => {
  await database?.drop();
  await cluster?.close();
});

describe('a Redis Cluster whose nodes want a password', () => {
  it('the password in redis+cluster://:PASSWORD@… reaches every node: status answers', async () => {
    const status = await runCli(['status'], envWith(cluster.url));
    expect(status.code, status.stderr).toBe(0);
  });

  it.each([
    ['a wrong password', 'not-the-password', /WRONGPASS/],
    ['no password', undefined, /NOAUTH/],
  ])(
    'with %s, status, sync and accounts remove say why Redis refused them (not "Failed to refresh slots cache"), never the password given',
    async (_case, password, cause) => {
      const env = envWith(cluster.urlWith(password));
      for (const args of [['status'], ['sync'], ['accounts', 'remove', 'nobody']]) {
        const result = await runCli(args, env, 30_000);
        expect(result.code, args.join(' ')).toBe(1);
        expect(result.stderr, args.join(' ')).toMatch(/cannot reach Redis \(/);
        expect(result.stderr, args.join(' ')).toMatch(cause);
        expect(result.stderr, args.join(' ')).not.toContain('slots cache');
        expect(`${result.stdout}${result.stderr}`).not.toContain(PASSWORD);
        if (password) expect(`${result.stdout}${result.stderr}`).not.toContain(password);
      }
    },
  );
});
