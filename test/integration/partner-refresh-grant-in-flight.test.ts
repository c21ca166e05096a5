// A refresh grant that has left is run to its answer and never sent again,
// and the rotated refresh token in that answer is kept whatever else happens:
// its callers giving up (SIGTERM, a lost run lock), the Redis token lock lost,
// an access token in the answer that cannot be used. Losing the rotation would
// break the account at its next refresh.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { TokenStore } from '../../src/api/token-store.js';
import { runOnce } from '../../src/queue/run-once.js';
import { cleanupAfterEach } from '../support/lifecycle.js';
import { tokenProviderOf } from '../support/partner-harness.js';

const { defer, partner } = cleanupAfterEach();

describe('a refresh grant in flight when its callers give up', () => {
  it('keeps the rotated refresh token when the only caller aborts after the grant was sent', async () => {
    const { sim, store, provider } = await partner();
    const caller = new AbortController();
    // The endpoint has rotated the token; the caller (a run stopping on
    // SIGTERM) gives up before the answer arrives.
    const off = sim.onRefresh(async () => {
      caller.abort(new Error('shutting down'));
      await sleep(200);
    });
    await expect((await provider()).getToken(caller.signal)).rejects.toThrow();
    off();
    await sleep(500);

    // The next refresh (the next worker) must work: the rotation was not lost.
    const next = await (await provider())
      .getToken()
      .then(() => 'ok')
      .catch((error: unknown) => (error as Error).message);
    expect(next).toBe('ok');
    expect(sim.partnerStats('acme').invalidGrants).toBe(0);
    expect((await store.get('acme'))?.state).toBe('enabled');
  });

  it('a worker shut down (SIGTERM) while a run refreshes the token leaves the account usable', async () => {
    const { sim, store, app } = await partner();
    const stopping = app();
    // SIGTERM arrives just as the token endpoint rotates the refresh token.
    const off = sim.onRefresh(async () => {
      stopping.shutdown.abort(new Error('shutting down'));
      await sleep(200);
    });
    await runOnce(stopping, [{ account: 'acme', resource: 'jobs' }], 'full').catch(() => undefined);
    off();
    await stopping.close();
    expect(sim.partnerStats('acme').refreshes).toBe(1);

    // The next worker start.
    const next = app();
    try {
      const [outcome] = await runOnce(next, [{ account: 'acme', resource: 'jobs' }], 'full');
      expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true });
    } finally {
      await next.close();
    }
    expect((await store.get('acme'))?.state).toBe('enabled');
    expect(sim.partnerStats('acme').invalidGrants).toBe(0);
  });
});

/** A token store whose locks can be lost on demand (Redis lost the key, a failover). */
function losableLocks(): { store: TokenStore; loseAll: () => number } {
  const held = new Set<AbortController>();
  return {
    store: {
      read: async () => undefined,
      write: async () => {},
      tryLock: async () => {
        const lost = new AbortController();
        held.add(lost);
        return {
          release: async () => {
            held.delete(lost);
          },
          lost: lost.signal,
        };
      },
    },
    /** Loses every lock held; returns how many there were. */
    loseAll: () => {
      for (const lock of held) lock.abort(new Error('token lock lost'));
      return held.size;
    },
  };
}

describe('the Redis token lock lost during a partner refresh grant', () => {
  it('never presents a refresh token a second time: the account stays enabled', async () => {
    const { sim, store, provider } = await partner();
    const locks = losableLocks();
    let lost = false;
    let locksLost = 0;
    // The endpoint has rotated the token; the Redis lock is lost before the answer is read.
    const off = sim.onRefresh(async () => {
      if (lost) return;
      lost = true;
      locksLost = locks.loseAll();
      await sleep(200);
    });
    const outcome = await (await provider(locks.store))
      .getToken()
      .then(() => 'ok')
      .catch((error: unknown) => (error as Error).message);
    off();
    // The grant was sent while the refresh held its token lock, and that lock was lost.
    expect(lost, 'the token endpoint never saw the refresh grant').toBe(true);
    expect(locksLost, 'no token lock was held while the grant was in flight').toBe(1);
    await sleep(300);
    // Whatever this call returns, no refresh token may be presented twice and
    // the account must not be broken by a lock hiccup.
    expect(sim.partnerStats('acme').invalidGrants, outcome).toBe(0);
    expect((await store.get('acme'))?.state, outcome).toBe('enabled');
  });
});

describe('a refresh answer with a rotated refresh token but an unusable access token', () => {
  it('still commits the rotated refresh token', async () => {
    const { store } = await partner();
    // A token endpoint that rotates, and answers an access token holding a CR LF.
    const endpoint = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            access_token: 'broken\r\naccess-token',
            expires_in: 3600,
            refresh_token: 'the-rotated-refresh-token',
          }),
        );
      });
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', () => resolve()));
    defer(() => new Promise((resolve) => endpoint.close(resolve)));
    const { port } = endpoint.address() as AddressInfo;

    const resolved = await store.resolve('acme');
    if (resolved.auth.mode !== 'partner') throw new Error('not a partner account');
    const provider = tokenProviderOf({
      ...resolved,
      auth: { ...resolved.auth, tokenUrl: `http://127.0.0.1:${port}/token` },
    });
    await expect(provider.getToken()).rejects.toThrow(/cannot be sent in a header/);

    // What the vault would present at the next refresh.
    let stored: string | undefined;
    await resolved.refreshTokens?.exchange(async (refreshToken) => {
      stored = refreshToken;
      return { value: undefined, rotated: undefined };
    });
    expect(stored).toBe('the-rotated-refresh-token');
  });
});
