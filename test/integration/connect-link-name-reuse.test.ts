import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createConnectLink } from '../../src/accounts/connect-links.js';
import type { Config } from '../../src/config/types.js';
import { main } from '../../src/main.js';
import { runOnce } from '../../src/queue/run-once.js';
import { captureIo } from '../support/capture-io.js';
import { type ConnectHarness, startConnectHarness } from '../support/connect-harness.js';

let h: ConnectHarness;
afterEach(async () => {
  await h?.close();
});

/** Opens `link`, approves for the simulated account acme, and returns the callback's page. */
async function connectThrough(link: URL): Promise<{ status: number; text: string }> {
  const opened = await h.get(link);
  expect(opened.status, await opened.clone().text()).toBe(302);
  const callback = await h.approve(opened.headers.get('location') as string, 'acme');
  const res = await h.get(callback);
  return { status: res.status, text: await res.text() };
}

/** acme's jobs as its schema shows them. */
async function acmeJobs(): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from acme.jobs`.execute(
    h.database.db,
  );
  return rows[0]?.n ?? 0;
}

async function linkCount(): Promise<{ links: number; unused: number }> {
  const { rows } = await sql<{ links: number; unused: number }>`
    select count(*)::int as links, count(*) filter (where used_at is null)::int as unused
    from hiresync.connect_links`.execute(h.database.db);
  return rows[0] ?? { links: 0, unused: 0 };
}

describe('a connect link for a name whose earlier registration left rows stored', () => {
  it('invite refuses at once naming the rows; a link made without --reuse-data is refused at its callback, registering nothing; --reuse-data connects the customer to them', async () => {
    h = await startConnectHarness();
    // acme connected through a link, synced, then removed without --drop-data.
    const first = await h.invite(['acme']);
    expect(first.code, first.stderr).toBe(0);
    expect((await connectThrough(first.link as URL)).status).toBe(200);
    const [run] = await runOnce(h.workers[1].app, [{ account: 'acme', resource: 'jobs' }], 'full');
    expect(run).toMatchObject({ ok: true });
    const removed = captureIo();
    expect(await main(['accounts', 'remove', 'acme'], h.env, removed), removed.err()).toBe(0);
    expect(await acmeJobs()).toBe(25);

    const refused = await h.invite(['acme']);
    expect(refused).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        "hiresync accounts invite: acme: 25 jobs, 25 jobs_history, 1 sync_runs stored from an earlier registration (removed without --drop-data); no link was made. If it is the same customer back, make the link again ('hiresync accounts invite acme') with --reuse-data to show them its data again; if not, drop them first with 'hiresync accounts remove acme --drop-data'\n",
      link: undefined,
    });
    expect(await linkCount()).toEqual({ links: 1, unused: 0 });

    // A link that stored no --reuse-data choice (made by an earlier release,
    // or before the rows were stored) registers nothing over them.
    const config: Config = h.config;
    const made = await createConnectLink(h.database.db, {
      account: 'acme',
      expiresInMs: 3_600_000,
      publicUrl: h.publicUrl,
      secretKeys: config.secretKeys,
      partner: config.partner,
      urls: { baseUrl: h.sim.url, authUrl: h.sim.authUrl },
      reuseData: true,
    });
    await sql`update hiresync.connect_links set reuse_data = false where used_at is null`.execute(
      h.database.db,
    );
    const before = await h.snapshot();
    const page = await connectThrough(new URL(made.url));
    expect(page.status, page.text).toBe(409);
    expect(page.text).toContain('This account cannot be connected yet');
    // The counts are the operator's: in the log, not on the link holder's page.
    expect(page.text).not.toContain('25 jobs');
    expect(h.workers[0].log.text()).toContain('acme: 25 jobs, 25 jobs_history, 1 sync_runs');
    expect(await h.snapshot()).toBe(before);
    expect(h.sim.partnerStats('acme')).toMatchObject({ codesRedeemed: 1 });
    expect(h.connected).toEqual(['acme']);

    // The same customer back: the link carries --reuse-data, and connects it to its rows.
    const reused = await h.invite(['acme', '--reuse-data']);
    expect(reused.code, reused.stderr).toBe(0);
    const connected = await connectThrough(reused.link as URL);
    expect(connected.status, connected.text).toBe(200);
    expect((await h.store.get('acme'))?.state).toBe('enabled');
    expect(await acmeJobs()).toBe(25);
  });
});
