import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/secret.js';
import { runAccounts } from '../support/accounts-cli.js';
import {
  type AccountsHarness,
  secretOf,
  startAccountsHarness,
} from '../support/accounts-harness.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { defer } = cleanupAfterEach();

const WRONG_SECRET = 'acme-wrong-secret-5d1f0c';

async function harness(options: Parameters<typeof startAccountsHarness>[0]) {
  const h = await startAccountsHarness(options);
  defer(() => h.close());
  return h;
}

/** Registers acme again with `secret` and `sub` (its data and schema stay). */
async function registerAcme(h: AccountsHarness, secret: string, sub?: string) {
  await h.store.remove('acme');
  await h.store.add({
    name: 'acme',
    baseUrl: h.sim.url,
    auth: {
      mode: 'client_credentials',
      authUrl: h.sim.authUrl,
      clientId: 'acme-client',
      clientSecret: new Secret(secret),
      sub,
    },
  });
}

/** `hiresync accounts ARGV` in process, with `input` on standard input. */
function accounts(h: AccountsHarness, argv: string[], input = '') {
  return runAccounts(h.env, argv, input);
}

describe("errors about a registered account's credentials", () => {
  it("name the account and 'hiresync accounts update', never default's variables; update with the right secret makes the next run succeed", async () => {
    const h = await harness({ accounts: ['acme'], records: 12 });
    await registerAcme(h, WRONG_SECRET);
    const [failed] = await h.sync([{ account: 'acme', resource: 'jobs' }]);
    expect(failed?.ok).toBe(false);
    const error = failed && !failed.ok ? failed.error : '';
    expect(error).toContain('account acme: the token service refused its client secret (401');
    expect(error).toContain(
      "store the right one with 'hiresync accounts update acme' (secret on standard input)",
    );
    expect(error).not.toMatch(/HIRESYNC_(CLIENT_ID|CLIENT_SECRET|SUB|AUTH_URL)/);
    const { rows } = await sql<{ error: string }>`
      select error from acme.sync_runs order by id desc limit 1`.execute(h.database.db);
    expect(rows[0]?.error).toContain("'hiresync accounts update acme'");

    // A cached token of the account's credential is dropped by the update.
    const redis = new Redis(h.env.REDIS_URL as string);
    defer(() => redis.disconnect());
    const ns = (await h.store.get('acme'))?.credentialNamespace;
    await redis.set(`${h.config.redisPrefix}:token:${ns}`, 'stale');
    const versionBefore = (await h.store.get('acme'))?.version;

    const update = await accounts(h, ['update', 'acme'], `${secretOf('acme')}\n`);
    expect(update).toMatchObject({ code: 0, stderr: '' });
    expect(update.stdout).toContain('updated account acme: client secret');
    for (const output of [update.stdout, update.stderr]) {
      expect(output).not.toContain(secretOf('acme'));
    }
    expect(await redis.exists(`${h.config.redisPrefix}:token:${ns}`)).toBe(0);
    const after = await h.store.get('acme');
    expect(Number(after?.version)).toBeGreaterThan(Number(versionBefore));
    const [succeeded] = await h.sync([{ account: 'acme', resource: 'jobs' }]);
    expect(succeeded).toMatchObject({ ok: true });
    expect(await h.liveIds('acme', 'jobs')).toEqual(h.expectedIds('acme', 'jobs'));
    const logged = h.log.text();
    expect(logged).not.toContain(secretOf('acme'));
    expect(logged).not.toContain(WRONG_SECRET);
  });

  it('of default still name the environment variables', async () => {
    const h = await harness({ accounts: [], records: 5, env: { HIRESYNC_CLIENT_SECRET: 'nope' } });
    const [failed] = await h.sync([{ account: 'default', resource: 'jobs' }]);
    const error = failed && !failed.ok ? failed.error : '';
    expect(error).toContain('HIRESYNC_CLIENT_SECRET');
    expect(error).not.toContain('accounts update');
  });

  it("a 403 for a registered account's sub names the account and 'accounts update NAME --sub'", async () => {
    const h = await harness({
      accounts: ['acme'],
      records: 5,
      simulator: {
        accounts: [
          {
            name: 'acme',
            clientId: 'acme-client',
            clientSecrets: [secretOf('acme')],
            nonAdminSubs: ['77'],
            dataset: {
              seed: 3,
              idOffset: 1_000_000,
              counts: { jobs: 5, job_posts: 5, tracking_links: 5 },
            },
          },
        ],
      },
    });
    await registerAcme(h, secretOf('acme'), '77');
    const [failed] = await h.sync([{ account: 'acme', resource: 'jobs' }]);
    const error = failed && !failed.ok ? failed.error : '';
    expect(error).toContain('403');
    expect(error).toContain("'hiresync accounts update acme --sub N'");
    expect(error).not.toContain('HIRESYNC_SUB');
    const update = await accounts(h, ['update', 'acme', '--sub', '1']);
    expect(update).toMatchObject({ code: 0, stderr: '' });
    expect((await h.store.get('acme'))?.sub).toBe('1');
    const [succeeded] = await h.sync([{ account: 'acme', resource: 'jobs' }]);
    expect(succeeded).toMatchObject({ ok: true });
  });
});
