import { describe, expect, it } from 'vitest';
import { main } from '../../src/main.js';
import { Secret } from '../../src/secret.js';
import { captureIo } from '../support/capture-io.js';
import { cleanupAfterEach } from '../support/lifecycle.js';
import { grantRefreshToken as grant } from '../support/partner-grant.js';

const { partner, cli } = cleanupAfterEach();

describe('a process killed when a rotated refresh token arrives', () => {
  it('leaves the account clearly marked needs_reauthorization, never silently stuck; authorizing again restores it with its data', async () => {
    const { sim, env, store, sync } = await partner();
    expect(await sync()).toMatchObject([{ ok: true, summary: { records: 30 } }]);
    // The access token expires: the next run's first request needs a refresh.
    sim.expireTokens('acme');
    // A `sync` in its own process; the simulator kills it (kill -9) once it has
    // rotated the refresh token, before the answer leaves.
    const { child, exit } = cli(['sync', '--account', 'acme', '--resource', 'jobs'], env);
    const off = sim.onRefresh(async (account) => {
      if (account !== 'acme') return;
      child.kill('SIGKILL');
      await exit;
    });
    await exit;
    expect(child.signalCode).toBe('SIGKILL');
    off();
    expect(sim.partnerStats('acme').refreshes).toBe(2);

    // The next run finds the refresh marked as started: the stored token was
    // rotated away, the API refuses it, and the account says so.
    const [outcome] = await sync();
    expect(outcome).toMatchObject({ ok: false });
    const error = outcome && !outcome.ok ? outcome.error : '';
    expect(error).toMatch(/needs re-authorizing/);
    expect(error).toMatch(/hiresync accounts authorize acme/);
    const [info] = await store.list();
    expect(info).toMatchObject({ name: 'acme', state: 'needs_reauthorization' });
    expect(info?.partner?.reauthorizationReason).toMatch(/interrupted/);
    const list = captureIo();
    expect(await main(['accounts', 'list'], env, list)).toBe(0);
    expect(list.out()).toMatch(/acme.*needs_reauthorization/);
    expect(list.out()).toMatch(/hiresync accounts authorize acme/);
    const status = captureIo();
    expect(await main(['status', '--account', 'acme'], env, status)).toBe(0);
    expect(status.out()).toMatch(
      /^acme\s+jobs\s.*needs re-authorizing: send a connect link \('hiresync accounts invite acme'\)$/m,
    );

    // Later runs are skipped, not retried against the API.
    const before = sim.partnerStats('acme').refreshes;
    const [skipped] = await sync();
    expect(skipped).toMatchObject({ ok: false, error: expect.stringMatching(/authorize/) });
    expect(sim.partnerStats('acme').refreshes).toBe(before);

    // The customer authorizes again: the account is back, its data kept.
    await store.authorize('acme', new Secret(await grant(sim)));
    const [restored] = await sync();
    expect(restored).toMatchObject({ ok: true, summary: { records: 30, deleted: 0 } });
    expect((await store.list())[0]).toMatchObject({ state: 'enabled' });
  });

  it('recovers by itself when the token endpoint never answered the interrupted refresh', async () => {
    const { sim, store, sync } = await partner({ rotateRefreshTokens: false });
    sim.dropNextRefreshResponse('acme');
    // The first attempt's refresh gets no answer (the grant is never sent
    // twice): the attempt fails; the retry finds the refresh marked, tries
    // the stored token, which the API never rotated, and goes on.
    const [outcome] = await sync();
    expect(outcome).toMatchObject({ ok: true, summary: { records: 30 } });
    expect(sim.partnerStats('acme')).toMatchObject({ refreshes: 2, invalidGrants: 0 });
    const [info] = await store.list();
    expect(info).toMatchObject({ state: 'enabled' });
    expect(info?.partner?.refreshInterrupted).toBe(false);
  });
});
