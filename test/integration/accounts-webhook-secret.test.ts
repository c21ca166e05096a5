import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { SecretBox } from '../../src/accounts/secret-box.js';
import { WebhookSecretStore, webhookSecretPurpose } from '../../src/accounts/webhook-secrets.js';
import { keysOf, runAccounts } from '../support/accounts-cli.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { clearRedisPrefix } from '../support/test-env.js';

const CLIENT_SECRET = `client-secret-${randomUUID()}`;
const WEBHOOK_SECRET = `webhook-secret-${randomUUID()}`;
const OLD_KEY = randomBytes(32).toString('base64');
const NEW_KEY = randomBytes(32).toString('hex');

let t: TestDatabase;
let env: Record<string, string>;

beforeEach(async () => {
  t = await createTestDatabase(inject('databaseUrl'));
  env = {
    DATABASE_URL: t.url,
    HIRESYNC_SECRET_KEY: OLD_KEY,
    // Nothing answers there: every add passes --no-test.
    HIRESYNC_BASE_URL: 'https://api.example.com/harvest',
    HIRESYNC_AUTH_URL: 'https://auth.example.com/oauth',
  };
  const added = await accounts(
    ['add', '--no-test', 'acme', '--client-id', 'acme-client'],
    `${CLIENT_SECRET}\n`,
  );
  expect(added).toMatchObject({ code: 0, stderr: '' });
});
afterEach(async () => {
  await t.drop();
});

/** `hiresync accounts ARGV` in process, with `input` on standard input. */
function accounts(argv: string[], input = '', overrides: Record<string, string> = {}) {
  return runAccounts({ ...env, ...overrides }, argv, input);
}

/** Every hiresync control row as text: where a plaintext secret would show. */
async function controlRows(): Promise<string> {
  const { rows } = await sql<{ row: string }>`
    select row_to_json(a)::text as row from hiresync.accounts a
    union all select row_to_json(w)::text from hiresync.webhook_secrets w`.execute(t.db);
  return rows.map((r) => r.row).join('\n');
}

async function sealed(): Promise<string | undefined> {
  const { rows } = await sql<{ secret: string }>`
    select secret from hiresync.webhook_secrets where account = 'acme'`.execute(t.db);
  return rows[0]?.secret;
}

describe('hiresync accounts update NAME --webhook-secret', () => {
  it("stores the secret from standard input sealed, never shows it, and leaves the account's version alone", async () => {
    const version = async () =>
      (await t.db.selectFrom('hiresync.accounts').select('version').executeTakeFirstOrThrow())
        .version;
    const before = await version();
    // Settings-only updates need no Redis: neither does a webhook secret.
    const result = await accounts(['update', 'acme', '--webhook-secret'], `${WEBHOOK_SECRET}\n`);
    expect(result).toEqual({
      code: 0,
      stdout:
        'updated account acme: webhook secret set (sealed); give the vendor the same secret and the URL HIRESYNC_PUBLIC_URL/webhooks/acme; running workers use it within 5 seconds\n',
      stderr: '',
    });
    expect(await version()).toBe(before);
    expect((await sealed())?.startsWith('hs1.')).toBe(true);
    expect(await controlRows()).not.toContain(WEBHOOK_SECRET);
    expect(await controlRows()).not.toContain(Buffer.from(WEBHOOK_SECRET).toString('base64'));
    const found = await new WebhookSecretStore(t.db, keysOf(OLD_KEY)).lookup('acme');
    expect(found?.secret?.reveal()).toBe(WEBHOOK_SECRET);
    expect(found?.state).toBe('enabled');
    // It opens for its own purpose only: not as the account's credential.
    const box = new SecretBox(keysOf(OLD_KEY).reveal());
    const stored = (await sealed()) as string;
    expect(() => box.open(stored, 'account:acme:secret')).toThrow();
    expect(box.open(stored, webhookSecretPurpose('acme'))).toBe(WEBHOOK_SECRET);
  });

  it('lists which accounts have one, never the secret', async () => {
    await accounts(['update', 'acme', '--webhook-secret'], `${WEBHOOK_SECRET}\n`);
    const withDefault = {
      HIRESYNC_CLIENT_ID: 'env-client',
      HIRESYNC_CLIENT_SECRET: 'env-secret',
      HIRESYNC_WEBHOOK_SECRET: 'default webhook secret',
    };
    const table = await accounts(['list'], '', withDefault);
    expect(table.code).toBe(0);
    expect(table.stdout.trimEnd().split('\n').at(-1)).toBe(
      'webhook secret set (POST HIRESYNC_PUBLIC_URL/webhooks/NAME accepted): default, acme',
    );
    const json = JSON.parse((await accounts(['list', '--json'], '', withDefault)).stdout);
    expect(json.webhooks).toEqual(['default', 'acme']);
    expect(JSON.stringify(json)).not.toContain(WEBHOOK_SECRET);
    expect(table.stdout).not.toContain(WEBHOOK_SECRET);
  });

  it('replaces a secret, and --no-webhook-secret removes it (saying so when there was none)', async () => {
    await accounts(['update', 'acme', '--webhook-secret'], `${WEBHOOK_SECRET}\n`);
    await accounts(['update', 'acme', '--webhook-secret'], 'another webhook secret\n');
    const store = new WebhookSecretStore(t.db, keysOf(OLD_KEY));
    expect((await store.lookup('acme'))?.secret?.reveal()).toBe('another webhook secret');
    expect(await accounts(['update', 'acme', '--no-webhook-secret'])).toMatchObject({
      code: 0,
      stdout:
        'updated account acme: webhook secret removed; running workers refuse its deliveries (401) within 5 seconds\n',
    });
    expect((await store.lookup('acme'))?.secret).toBeUndefined();
    expect((await accounts(['update', 'acme', '--no-webhook-secret'])).stdout).toBe(
      'account acme had no webhook secret; nothing changed\n',
    );
  });

  it('refuses an empty or short secret, --secret beside it, and both flags, before connecting (exit 2)', async () => {
    for (const [argv, input, message] of [
      [['--webhook-secret'], '', 'no webhook secret for account acme on standard input'],
      [['--webhook-secret'], 'short\n', 'at least 8 characters'],
      [['--webhook-secret', '--secret'], `${WEBHOOK_SECRET}\n`, 'both read standard input'],
      [['--webhook-secret', '--no-webhook-secret'], '', 'give one of them'],
    ] as const) {
      const result = await accounts(['update', 'acme', ...argv], input, {
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(message);
      expect(result.stderr).not.toContain('short\n');
    }
    expect(await sealed()).toBeUndefined();
  });

  it('exits 1 for an account that is not registered, and the secret goes with a removed account', async () => {
    const unknown = await accounts(['update', 'nobody', '--webhook-secret'], `${WEBHOOK_SECRET}\n`);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no account nobody is registered');
    await accounts(['update', 'acme', '--webhook-secret'], `${WEBHOOK_SECRET}\n`);
    const prefix = `test-${randomUUID()}`;
    const removed = await accounts(['remove', 'acme'], '', {
      REDIS_URL: inject('redisUrl'),
      HIRESYNC_REDIS_PREFIX: prefix,
    });
    await clearRedisPrefix({ HIRESYNC_REDIS_PREFIX: prefix });
    expect(removed.code, removed.stderr).toBe(0);
    expect(await sealed()).toBeUndefined();
  });
});

describe('hiresync accounts rekey', () => {
  it('re-seals webhook secrets too, so that the new key alone then opens them', async () => {
    await accounts(['update', 'acme', '--webhook-secret'], `${WEBHOOK_SECRET}\n`);
    const before = await sealed();
    const rotated = `${NEW_KEY},${OLD_KEY}`;
    const result = await accounts(['rekey'], '', { HIRESYNC_SECRET_KEY: rotated });
    expect(result.stdout).toBe(
      're-sealed 2 credential(s) with the first key of HIRESYNC_SECRET_KEY; 0 already sealed with it\n',
    );
    expect(await sealed()).not.toBe(before);
    const found = await new WebhookSecretStore(t.db, keysOf(NEW_KEY)).lookup('acme');
    expect(found?.secret?.reveal()).toBe(WEBHOOK_SECRET);
    await expect(new WebhookSecretStore(t.db, keysOf(OLD_KEY)).lookup('acme')).rejects.toThrow(
      /HIRESYNC_SECRET_KEY no longer holds/,
    );
  });
});
