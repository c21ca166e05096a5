import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import { AccountStore } from '../../src/accounts/account-store.js';
import { createApp } from '../../src/app.js';
import { registryOf } from '../../src/commands/account-options.js';
import { loadConfig } from '../../src/config/load-config.js';
import { runOnce } from '../../src/queue/run-once.js';
import { RESOURCE_NAMES } from '../../src/resources/index.js';
import { REDACTED, Secret } from '../../src/secret.js';
import { migrateAll, migrateSchemas } from '../../src/warehouse/setup/migrate-all.js';
import { captureLogger } from '../support/capture-logger.js';
import { createTestDatabase } from '../support/databases.js';
import { cleanupAfterEach } from '../support/lifecycle.js';
import { clearRedisPrefix, servicesEnv } from '../support/test-env.js';

const { defer } = cleanupAfterEach();

/** Many customers of one API; `forbidden` accounts get a 403 whose body echoes the caller's token. */
async function startApi() {
  const tokens = new Map<string, string>();
  const forbidden = new Set<string>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'POST' && url.pathname === '/oauth/token') {
      req.resume();
      const basic = Buffer.from(
        (req.headers.authorization ?? '').replace(/^Basic /, ''),
        'base64',
      ).toString();
      const client = basic.split(':')[0] ?? '';
      const token = `zq${randomBytes(18).toString('hex')}`;
      tokens.set(token, client);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: token, token_type: 'bearer', expires_in: 3600 }));
      return;
    }
    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    const client = tokens.get(token);
    if (client === undefined) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"message":"unknown token"}');
      return;
    }
    if (forbidden.has(client)) {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: `token ${token} may not read ${url.pathname}` }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('[]');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tokens,
    forbidden,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('redaction of access tokens in a worker serving many accounts', () => {
  it("keeps every token still in force out of sync_runs.error, however many accounts' tokens came after it", async () => {
    const api = await startApi();
    defer(() => api.close());
    const database = await createTestDatabase(inject('databaseUrl'));
    defer(() => database.drop());
    const env: Record<string, string> = {
      ...servicesEnv(database.url),
      HIRESYNC_BASE_URL: api.url,
      HIRESYNC_AUTH_URL: `${api.url}/oauth`,
      HIRESYNC_CLIENT_ID: 'default-client',
      HIRESYNC_CLIENT_SECRET: 'default-secret',
      HIRESYNC_RUN_BACKOFF: '100ms',
      HIRESYNC_RUN_ATTEMPTS: '1',
      HIRESYNC_CONCURRENCY: '8',
    };
    defer(() => clearRedisPrefix(env));
    const config = loadConfig(env, RESOURCE_NAMES);
    await migrateAll(database.db);
    const store = new AccountStore(database.db, config.secretKeys);
    // A deployment of 120 customers: victim, then c001…c119.
    const names = [
      'victim',
      ...Array.from({ length: 119 }, (_, i) => `c${String(i + 1).padStart(3, '0')}`),
    ];
    for (const name of names) {
      await store.add({
        name,
        baseUrl: api.url,
        auth: {
          mode: 'client_credentials',
          authUrl: `${api.url}/oauth`,
          clientId: `${name}-client`,
          clientSecret: new Secret(`${name}-secret-value`),
        },
      });
    }
    await migrateSchemas(database.db, names);
    const app = createApp(config, captureLogger('info').logger, {
      defaultMetrics: false,
      registry: registryOf(config),
    });
    defer(() => app.close());

    // victim syncs first; its token (valid for an hour) stays in force in this process.
    expect(await runOnce(app, [{ account: 'victim', resource: 'jobs' }], 'full')).toMatchObject([
      { ok: true },
    ]);
    // Every other customer syncs once: each mints its own token.
    const others = names.slice(1).map((account) => ({ account, resource: 'jobs' as const }));
    const outcomes = await runOnce(app, others, 'full');
    expect(outcomes.filter((o) => !o.ok)).toEqual([]);
    // victim's API now answers 403, echoing the token victim sent (the one it got first).
    api.forbidden.add('victim-client');
    const [failed] = await runOnce(app, [{ account: 'victim', resource: 'jobs' }], 'full');
    expect(failed).toMatchObject({ ok: false });
    const victimToken = [...api.tokens].find(([, client]) => client === 'victim-client')?.[0];
    expect(victimToken).toBeDefined();
    const { rows: runs } = await sql<{ outcome: string; error: string | null }>`
      select outcome, error from hiresync.data_sync_runs
      where account = 'victim' and outcome = 'failed'`.execute(database.db);
    expect(runs).toHaveLength(1);
    expect(runs[0]?.error).toMatch(/^403/);
    expect(runs[0]?.error, 'sync_runs.error holds the access token in clear').not.toContain(
      victimToken,
    );
    expect(failed && !failed.ok ? failed.error : '').not.toContain(victimToken);
    // The 403's body is kept, the token in it replaced by the marker.
    expect(runs[0]?.error).toContain(`token ${REDACTED} may not read /v3/jobs`);
    expect(failed && !failed.ok ? failed.error : '').toContain(`token ${REDACTED} may not read`);
  }, 180_000);
});
