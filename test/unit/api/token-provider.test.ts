import { setTimeout as sleep } from 'node:timers/promises';
import got from 'got';
import { describe, expect, it } from 'vitest';
import type { CachedToken } from '../../../src/api/token-cipher.js';
import { TokenProvider } from '../../../src/api/token-provider.js';
import type { TokenStore } from '../../../src/api/token-store.js';
import { Secret } from '../../../src/secret.js';
import { captureLogger } from '../../support/capture-logger.js';

/** A shared store in which another process replaces T1 by T2 once T1 has been read. */
function storeHandingOut(tokens: string[]): TokenStore & { reads: number } {
  const store = {
    reads: 0,
    async read(): Promise<CachedToken | undefined> {
      const index = Math.min(store.reads, tokens.length - 1);
      store.reads += 1;
      await sleep(20);
      return { accessToken: tokens[index] as string, expiresAt: undefined, obtainedAt: Date.now() };
    },
    async write() {},
    async tryLock() {
      return { release: async () => {}, lost: new AbortController().signal };
    },
  };
  return store;
}

function provider(store: TokenStore): TokenProvider {
  return new TokenProvider({
    auth: {
      mode: 'client_credentials',
      tokenUrl: 'http://127.0.0.1:9/token',
      clientId: 'id',
      clientSecret: new Secret('secret-value'),
      sub: undefined,
    },
    http: got.extend({ retry: { limit: 0 } }),
    store,
    logger: captureLogger('silent').logger,
    maxRetries: 0,
    defaultRetryAfterMs: 1000,
  });
}

describe('TokenProvider.renew', () => {
  it('never hands out the refused token, even when it joins a refresh already in flight', async () => {
    const tokens = provider(storeHandingOut(['T1', 'T2']));
    // A first caller starts a refresh (it will read T1 from the store)...
    const first = tokens.getToken();
    // ...and while it is in flight, another caller's request is refused with T1.
    const renewed = tokens.renew('T1');
    expect(await first).toBe('T1');
    expect(await renewed).toBe('T2');
  });

  it('returns a token another caller already renewed without another refresh', async () => {
    const store = storeHandingOut(['T1', 'T2', 'T3']);
    const tokens = provider(store);
    expect(await tokens.getToken()).toBe('T1');
    expect(await tokens.renew('T1')).toBe('T2');
    const reads = store.reads;
    expect(await tokens.renew('T1')).toBe('T2');
    expect(store.reads).toBe(reads);
  });
});
