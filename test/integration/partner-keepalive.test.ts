// The partner keep-alive refreshes idle partner accounts so that their
// refresh tokens never expire unused: at least every HIRESYNC_REFRESH_KEEPALIVE,
// so an account is due one tick early rather than a tick late.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { keepaliveTickMs } from '../../src/accounts/keepalive-tick.js';
import { keepAlive } from '../../src/queue/keepalive.js';
import { captureLogger } from '../support/capture-logger.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { defer, partner } = cleanupAfterEach();

describe('the partner keep-alive', () => {
  it('refreshes an idle partner account (rotating its refresh token) and nothing else', async () => {
    const { sim, store, app: appOf } = await partner();
    const app = appOf();
    defer(() => app.close());
    const renew = async (account: string) => (await app.contextOf(account)).renewToken?.();
    const log = captureLogger('info');
    // Just authorized: not due.
    expect(
      await keepAlive({
        due: () => store.partnerAccountsDue(3_600_000),
        renew,
        logger: log.logger,
      }),
    ).toEqual({ renewed: [], failed: [] });
    // Idle past the keep-alive (0 here): refreshed twice, each time with the token rotated the time before.
    for (let i = 1; i <= 2; i += 1) {
      expect(
        await keepAlive({ due: () => store.partnerAccountsDue(0), renew, logger: log.logger }),
      ).toEqual({ renewed: ['acme'], failed: [] });
      expect(sim.partnerStats('acme')).toMatchObject({ refreshes: i, invalidGrants: 0 });
    }
  });
});

describe('the keep-alive due computation', () => {
  it('takes an account that would pass HIRESYNC_REFRESH_KEEPALIVE before the next tick', async () => {
    const { store, database } = await partner();
    const keepaliveMs = 6 * 3_600_000; // the default 6h
    const tickMs = keepaliveTickMs(keepaliveMs); // 1h
    // Last refreshed half a tick short of the keep-alive: not refreshed at this
    // tick, it would wait for the next one, up to keepalive + tick/2 in all.
    const ageMs = keepaliveMs - tickMs / 2;
    await sql`update hiresync.refresh_tokens
      set authorized_at = now() - interval '2 days',
          refreshed_at = now() - ${ageMs} * interval '1 millisecond'`.execute(database.db);
    const dueNow = await store.partnerAccountsDue(keepaliveMs);
    // Not refreshed now means refreshed at the next tick at the earliest:
    const nextRefreshAgeMs = dueNow.includes('acme') ? ageMs : ageMs + tickMs;
    expect(nextRefreshAgeMs).toBeLessThanOrEqual(keepaliveMs);
  });
});
