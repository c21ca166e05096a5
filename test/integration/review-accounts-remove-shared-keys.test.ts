import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/main.js';
import { Secret } from '../../src/secret.js';
import { startAccountsHarness } from '../support/accounts-harness.js';
import { cleanupAfterEach } from '../support/lifecycle.js';
import { captureIo } from '../unit/commands/capture-io.js';

const { defer } = cleanupAfterEach();

describe('accounts remove of an account sharing its credential', () => {
  it("keeps the token and pacing keys default (the environment's account) still uses", async () => {
    const h = await startAccountsHarness({ accounts: [] });
    defer(() => h.close());
    // 'twin' was registered with the environment's own client (same auth URL, client id, secret).
    await h.store.add({
      name: 'twin',
      baseUrl: h.sim.url,
      auth: {
        mode: 'client_credentials',
        authUrl: h.sim.authUrl,
        clientId: h.env.HIRESYNC_CLIENT_ID as string,
        clientSecret: new Secret(h.env.HIRESYNC_CLIENT_SECRET as string),
      },
    });
    expect(await h.sync([{ account: 'default', resource: 'jobs' }])).toMatchObject([{ ok: true }]);
    const redis = new Redis(h.env.REDIS_URL as string);
    defer(() => redis.disconnect());
    const prefix = h.config.redisPrefix;
    const before = (await redis.keys(`${prefix}:token:*`)).concat(
      await redis.keys(`${prefix}:rate:*`),
    );
    expect(before.length).toBeGreaterThan(0);

    const io = captureIo();
    expect(await main(['accounts', 'remove', 'twin'], h.env, io)).toBe(0);
    const after = (await redis.keys(`${prefix}:token:*`)).concat(
      await redis.keys(`${prefix}:rate:*`),
    );
    // README: "keys shared with another account's identical credentials stay".
    expect(after.sort(), "default's token and pacing keys").toEqual(before.sort());
  });
});
