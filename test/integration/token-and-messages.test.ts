import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import got from 'got';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { TokenCipher } from '../../src/api/token-cipher.js';
import { TokenProvider } from '../../src/api/token-provider.js';
import { RedisTokenStore } from '../../src/api/token-store.js';
import type { AuthConfig } from '../../src/config/types.js';
import { deletePrefix } from '../../src/queue/redis.js';
import { redactSecrets, Secret } from '../../src/secret.js';
import { closeHarnessesAfterEach, SIM_SECRET } from '../support/api-harness.js';
import { captureLogger } from '../support/capture-logger.js';

const { startHostile } = closeHarnessesAfterEach();

describe('messages that name the right cause', () => {
  it('blame a 404 from the token endpoint on HIRESYNC_AUTH_URL, not on the credentials', async () => {
    const hostile = await startHostile((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'Not Found' }));
    });
    const error = (await hostile.walk('jobs').catch((e: unknown) => e)) as Error;
    expect(error.message).not.toMatch(/check HIRESYNC_CLIENT_ID, HIRESYNC_CLIENT_SECRET/);
    expect(error.message).toMatch(/check HIRESYNC_AUTH_URL/);
  });

  it('name per_page and the filters, not the jobs status alone, for a 422 on another list', async () => {
    const hostile = await startHostile((req, res, { token }) => {
      if (req.method === 'POST') return token();
      res.writeHead(422, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'Unprocessable', errors: ['bad parameter'] }));
    });
    const error = (await hostile.walk('tracking_links').catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(/HIRESYNC_PER_PAGE/);
    expect(error.message).not.toMatch(/and HIRESYNC_JOBS_STATUS$/);
    expect(error.message).toMatch(/HIRESYNC_UPDATED_FILTER/);
  });
});

describe('secrets echoed in long error texts', () => {
  it('are redacted before the text is cut, so no prefix of a secret shows (error body)', async () => {
    const hostile = await startHostile((req, res, { token }) => {
      if (req.method === 'POST') return token();
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end(`${'x'.repeat(290)}${SIM_SECRET} and token hostile-token-1`);
    });
    const error = (await hostile.walk('jobs').catch((e: unknown) => e)) as Error;
    const shown = redactSecrets(error.message);
    expect(shown).not.toContain(SIM_SECRET.slice(0, 10));
    // The body is shown up to the secret, which the marker replaces.
    expect(shown).toMatch(/^400 from \/v3\/jobs: x{200,}\[redacted\]/);
  });

  it('are redacted before the text is cut, so no prefix of a token shows (non-JSON 200)', async () => {
    const hostile = await startHostile((req, res, { token }) => {
      if (req.method === 'POST') return token();
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<html>${'y'.repeat(44)}hostile-token-1</html>`);
    });
    const error = (await hostile.walk('jobs').catch((e: unknown) => e)) as Error;
    const shown = redactSecrets(error.message);
    expect(shown).not.toContain('hostile-to');
    expect(shown).toContain(`"<html>${'y'.repeat(44)}[redacted]"`);
  });
});

describe('the token refresh lock', () => {
  it('is kept alive while a token request outlives its TTL, so only one process mints', async () => {
    let mints = 0;
    const server = createServer((_req, res) => {
      mints += 1;
      // A slow token endpoint (or a 429 with Retry-After), longer than the lock's TTL.
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ access_token: `tok-${mints}-${randomUUID()}`, expires_in: 3600 }));
      }, 800);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
    const prefix = `test-${randomUUID()}`;
    const auth: AuthConfig = {
      mode: 'client_credentials',
      tokenUrl: `${url}/token`,
      clientId: 'id',
      clientSecret: new Secret('lock-test-secret'),
      sub: undefined,
    };
    const make = () =>
      new TokenProvider({
        auth,
        http: got.extend({ retry: { limit: 0 }, throwHttpErrors: false }),
        // lockTtlMs stands in for the production 30 s against a > 30 s Retry-After.
        store: new RedisTokenStore({
          redis,
          cipher: new TokenCipher(auth),
          prefix,
          lockTtlMs: 300,
        }),
        logger: captureLogger('silent').logger,
        maxRetries: 0,
        defaultRetryAfterMs: 1000,
      });
    try {
      const [a, b] = await Promise.all([make().getToken(), make().getToken()]);
      expect(a).toBe(b);
      expect(mints).toBe(1);
    } finally {
      server.close();
      await deletePrefix(redis, prefix);
      redis.disconnect();
    }
  });
});
