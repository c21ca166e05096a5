// The console's actions over plain HTTP against a real worker, Postgres and
// Redis: each does what its command does (the account disabled in the
// store and its schedulers gone, a BullMQ job queued for the pair, an invite
// link made and withdrawn, the credentials tested), and none does anything
// from another site or without the page's token.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import {
  type ConnectLinkTables,
  createConnectLink,
  listPendingLinks,
  withdrawConnectLink,
} from '../../src/accounts/connect-links.js';
import { enqueueConsoleRun } from '../../src/queue/console-runs.js';
import { createSyncQueue } from '../../src/queue/sync-job.js';
import { type ConsoleDeployment, startConsoleDeployment } from '../support/console-deployment.js';
import { CONSOLE_LOGIN, formToken, postToConsole } from '../support/console-http.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';
import type { PartnerHarness } from '../support/partner-harness.js';

const { partner, cli, defer } = cleanupAfterEach();

/** The console as an operator's browser reads it now. */
async function consolePage(d: ConsoleDeployment): Promise<string> {
  return (await fetch(`${d.url}/`, { headers: CONSOLE_LOGIN })).text();
}

/** A fresh page's form token. */
async function freshToken(d: ConsoleDeployment): Promise<string> {
  return formToken(await consolePage(d));
}

/** {@link act} with the token of a page the console renders now. */
async function actNow(d: ConsoleDeployment, form: Record<string, string>) {
  return act(d, { ...form, token: await freshToken(d) });
}

/** POSTs `form` as the console's page does (from its own origin unless `headers` say otherwise). */
function act(
  d: ConsoleDeployment,
  form: Record<string, string>,
  headers: Record<string, string> = { origin: d.url },
): Promise<{ status: number; page: string }> {
  return postToConsole(d, form, headers);
}

function syncQueue(h: PartnerHarness) {
  const redis = new Redis(h.env.REDIS_URL as string, { maxRetriesPerRequest: null });
  const queue = createSyncQueue(redis, h.config.redisPrefix);
  defer(async () => {
    await queue.close();
    redis.disconnect();
  });
  return queue;
}

function links(h: PartnerHarness) {
  return h.database.db
    .withTables<ConnectLinkTables>()
    .selectFrom('hiresync.connect_links')
    .select(['id', 'account', 'base_url', 'withdrawn_at', 'used_at'])
    .orderBy('id')
    .execute();
}

/** The worker's log events of the console's actions. */
function actionEvents(d: ConsoleDeployment): Record<string, unknown>[] {
  return d.worker
    .stdout()
    .split('\n')
    .filter((l) => l.includes('"component":"console"') && l.includes('"action"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The action events once `count` are logged (the worker writes its log as it goes). */
async function loggedEvents(
  d: ConsoleDeployment,
  count: number,
): Promise<Record<string, unknown>[]> {
  await waitFor(async () => actionEvents(d).length >= count, 10_000);
  return actionEvents(d);
}

describe('the console actions over HTTP', () => {
  it('does nothing when another site posts an action, or the console’s own origin posts it without a token', async () => {
    const h = await partner();
    const d = await startConsoleDeployment(h, cli);
    const token = await freshToken(d);
    const forms: Record<string, string>[] = [
      { action: 'invite', account: 'newco' },
      { action: 'sync', account: 'default', resource: 'jobs' },
      { action: 'disable', account: 'beta' },
      { action: 'test', account: 'beta' },
    ];
    for (const form of forms) {
      const cross = await act(
        d,
        { ...form, token },
        { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      );
      expect(cross.status).toBe(403);
      const tokenless = await act(d, form);
      expect(tokenless.status).toBe(403);
    }
    expect(await links(h)).toEqual([]);
    expect((await h.store.get('beta'))?.state).toBe('credentials_refused');
    const queue = syncQueue(h);
    const jobs = await queue.getJobs(['waiting', 'active', 'delayed', 'completed', 'failed']);
    expect(jobs.filter((j) => j.data.origin === 'console')).toEqual([]);
    // Each refusal is logged (those refused before the form is read name no action).
    const refusals = () =>
      d.worker
        .stdout()
        .split('\n')
        .filter((l) => l.includes('"msg":"console action refused"'));
    await waitFor(async () => refusals().length >= 8, 10_000);
    expect(refusals()).toHaveLength(8);
    expect(actionEvents(d).every((e) => e.msg === 'console action refused')).toBe(true);
  }, 60_000);

  it('disables an account in the store and removes its schedulers, enables it again and its schedulers come back', async () => {
    const h = await partner();
    const d = await startConsoleDeployment(h, cli);
    const queue = syncQueue(h);
    // gamma is enabled: its schedulers are made by the worker.
    const gammaSchedulers = async () =>
      (await queue.getJobSchedulers()).map((s) => s.key).filter((k) => k.includes(':gamma:'));
    await waitFor(async () => (await gammaSchedulers()).length > 0, 20_000);

    const disabled = await actNow(d, {
      action: 'disable',
      account: 'gamma',
    });
    expect(disabled.status).toBe(200);
    expect(disabled.page).toContain('The account gamma is disabled');
    expect((await h.store.get('gamma'))?.state).toBe('disabled');
    expect(await gammaSchedulers()).toEqual([]);
    const page = await consolePage(d);
    expect(page).toContain('<h3>gamma <span class="badge ">disabled</span></h3>');
    expect(page).toContain('Enable gamma');

    const enabled = await actNow(d, {
      action: 'enable',
      account: 'gamma',
    });
    expect(enabled.status).toBe(200);
    expect((await h.store.get('gamma'))?.state).toBe('enabled');
    expect((await gammaSchedulers()).length).toBeGreaterThan(0);

    // default is the environment's: not the console's to disable.
    const env = await act(d, { action: 'disable', account: 'default', token: await freshToken(d) });
    expect(env.status).toBe(409);
    expect(env.page).toContain('the account default is the environment');
    expect((await loggedEvents(d, 3)).map((e) => [e.action, e.account, e.outcome])).toEqual([
      ['disable', 'gamma', 'disabled'],
      ['enable', 'gamma', 'enabled'],
      [
        'disable',
        'default',
        expect.stringMatching(/^refused: the account default is the environment/),
      ],
    ]);
  }, 60_000);

  it('queues a console run of the (account, resource) on the shared queue, and refuses a resource the account does not sync', async () => {
    const h = await partner();
    const d = await startConsoleDeployment(h, cli);
    const queued = await actNow(d, {
      action: 'sync',
      account: 'default',
      resource: 'jobs',
    });
    expect(queued.status).toBe(200);
    expect(queued.page).toContain('A run of default/jobs is queued');
    const jobId = /Job (\d+):/.exec(queued.page)?.[1] ?? '';
    const job = await syncQueue(h).getJob(jobId);
    expect(job?.name).toBe('jobs');
    expect(job?.data).toMatchObject({ resource: 'jobs', requested: 'auto', origin: 'console' });
    // The worker takes it: a run of default's jobs ends.
    await waitFor(async () => (await job?.getState()) === 'completed', 30_000);

    const other = await actNow(d, {
      action: 'sync',
      account: 'default',
      resource: 'offices',
    });
    expect(other.status).toBe(409);
    expect(other.page).toContain(
      'account default does not sync &quot;offices&quot; (its resources: jobs)',
    );
    const disabled = await actNow(d, {
      action: 'sync',
      account: 'acme',
      resource: 'jobs',
    });
    expect(disabled.status).toBe(409);
    expect(disabled.page).toContain('account acme is needs reauthorization: its runs are skipped');
    expect((await loggedEvents(d, 3))[0]).toMatchObject({
      component: 'console',
      msg: 'run queued',
      action: 'sync',
      account: 'default',
      resource: 'jobs',
      outcome: `queued (job ${jobId})`,
    });
  }, 60_000);

  it('makes an invite link for a new customer shown once, lists it pending without its token, and withdraws it', async () => {
    const h = await partner();
    const d = await startConsoleDeployment(h, cli);
    const invalid = await actNow(d, {
      action: 'invite',
      account: 'New Co',
    });
    expect(invalid.status).toBe(409);
    expect(invalid.page).toContain('must be 1 to 40 lowercase letters, digits or _');
    const taken = await act(d, { action: 'invite', account: 'beta', token: await freshToken(d) });
    expect(taken.status).toBe(409);
    expect(taken.page).toContain('account beta is registered already');
    expect(await links(h)).toEqual([]);

    const made = await act(d, { action: 'invite', account: 'newco', token: await freshToken(d) });
    expect(made.status).toBe(200);
    const url = /<p class="link">([^<]+)<\/p>/.exec(made.page)?.[1] ?? '';
    expect(url).toMatch(new RegExp(`^${d.url}/connect/\\S+$`));
    const [link] = await links(h);
    expect(link).toMatchObject({ account: 'newco', base_url: h.sim.url, withdrawn_at: null });
    const page = await consolePage(d);
    expect(page).toContain(`<tr data-link="${link?.id}">\n<td>newco</td>\n<td>a new account</td>`);
    expect(page).not.toContain(url);
    expect(page).not.toContain(url.split('/connect/')[1]);

    const withdrawn = await actNow(d, {
      action: 'withdraw',
      account: 'newco',
      link: String(link?.id),
    });
    expect(withdrawn.status).toBe(200);
    expect(withdrawn.page).toContain('A connect link for newco was withdrawn');
    expect((await links(h))[0]?.withdrawn_at).not.toBeNull();
    expect(await consolePage(d)).toContain('No link waits to be used.');
    // Opening it now says so.
    const opened = await fetch(url, { redirect: 'manual' });
    expect(opened.status).toBe(410);
    expect(await opened.text()).toContain('This link was withdrawn');
    expect(d.worker.stdout()).not.toContain('/connect/');
    expect((await loggedEvents(d, 4)).filter((e) => e.level === 30)).toEqual([
      expect.objectContaining({ action: 'invite', account: 'newco', msg: 'connect link made' }),
      expect.objectContaining({
        action: 'withdraw',
        account: 'newco',
        link: String(link?.id),
        outcome: 'withdrawn',
      }),
    ]);
  }, 60_000);

  it('tests an account’s credentials as accounts test does: what is wrong and what to do, never the secret', async () => {
    const h = await partner();
    const d = await startConsoleDeployment(h, cli);
    const refused = await act(d, { action: 'test', account: 'beta', token: await freshToken(d) });
    expect(refused.status).toBe(200);
    expect(refused.page).toContain('The credentials of beta do not work<');
    expect(refused.page).toContain(
      'beta (client credentials): no access token could be minted with its credentials',
    );
    expect(refused.page).toContain('&#39;hiresync accounts update beta&#39;');
    expect(refused.page).not.toContain('beta-secret-the-api-refuses');
    const works = await act(d, { action: 'test', account: 'default', token: await freshToken(d) });
    expect(works.status).toBe(200);
    expect(works.page).toContain('The credentials of default work');
    expect(works.page).toMatch(
      /<tr data-resource="jobs"><td>jobs<\/td><td><span class="badge ok">ok<\/span>/,
    );
    expect((await loggedEvents(d, 2)).map((e) => [e.msg, e.account, e.outcome])).toEqual([
      ['account tested', 'beta', 'failed'],
      ['account tested', 'default', 'passed'],
    ]);
  }, 60_000);

  it('queues one console run per pair while one waits: pressing again queues nothing more', async () => {
    const h = await partner();
    const queue = syncQueue(h);
    const config = { runAttempts: 1, runBackoffMs: 100 };
    const first = await enqueueConsoleRun(queue, 'acme', 'jobs', config);
    const again = await enqueueConsoleRun(queue, 'acme', 'jobs', config);
    const other = await enqueueConsoleRun(queue, 'acme', 'offices', config);
    expect(first.already).toBe(false);
    expect(again).toEqual({ jobId: first.jobId, already: true });
    expect(other.already).toBe(false);
    const waiting = await queue.getJobs(['waiting']);
    expect(waiting.map((j) => j.data)).toEqual(
      expect.arrayContaining([
        { account: 'acme', resource: 'jobs', requested: 'auto', origin: 'console' },
        { account: 'acme', resource: 'offices', requested: 'auto', origin: 'console' },
      ]),
    );
    expect(waiting).toHaveLength(2);
  }, 30_000);

  it('withdraws only a pending link of the account named: a used, withdrawn or another account’s link stays as it is, and only pending ones are listed', async () => {
    const h = await partner();
    const make = (account: string) =>
      createConnectLink(h.database.db, {
        account,
        expiresInMs: 3_600_000,
        publicUrl: 'http://127.0.0.1:1',
        secretKeys: h.config.secretKeys,
        partner: h.config.partner,
        urls: { baseUrl: h.sim.url, authUrl: h.sim.authUrl },
      });
    await make('acme'); // withdrawn by the next one
    await make('acme');
    await make('newco');
    await make('usedco');
    const rows = await links(h);
    const id = (account: string, n = 0) => String(rows.filter((r) => r.account === account)[n]?.id);
    await h.database.db
      .withTables<ConnectLinkTables>()
      .updateTable('hiresync.connect_links')
      .set({ used_at: new Date().toISOString() })
      .where('account', '=', 'usedco')
      .execute();
    expect((await listPendingLinks(h.database.db)).map((l) => [l.account, l.newAccount])).toEqual([
      ['acme', false],
      ['newco', true],
    ]);
    expect(await withdrawConnectLink(h.database.db, 'acme', id('acme', 0))).toBe(false);
    expect(await withdrawConnectLink(h.database.db, 'usedco', id('usedco'))).toBe(false);
    expect(await withdrawConnectLink(h.database.db, 'acme', id('newco'))).toBe(false);
    expect(await withdrawConnectLink(h.database.db, 'acme', 'not an id')).toBe(false);
    expect((await listPendingLinks(h.database.db)).map((l) => l.account)).toEqual([
      'acme',
      'newco',
    ]);
    expect(await withdrawConnectLink(h.database.db, 'newco', id('newco'))).toBe(true);
    expect(await withdrawConnectLink(h.database.db, 'newco', id('newco'))).toBe(false);
    expect((await listPendingLinks(h.database.db)).map((l) => l.account)).toEqual(['acme']);
    expect((await links(h)).find((l) => l.account === 'usedco')?.withdrawn_at).toBeNull();
  }, 30_000);
});
