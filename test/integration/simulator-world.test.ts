import { afterEach, describe, expect, it } from 'vitest';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import type { SimulatorOptions } from '../../src/simulator/simulator-options.js';
import { WORLD_RESOURCES } from '../../src/simulator/world/world.js';
import { runSimulate } from '../support/run-simulate.js';
import { servedRecords, servedWorld, simulatorToken } from '../support/world-client.js';

const started: ApiSimulator[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((sim) => sim.close()));
});

async function startSim(options: SimulatorOptions): Promise<ApiSimulator> {
  const sim = await ApiSimulator.start(options);
  started.push(sim);
  return sim;
}

const ids = (rows: Array<Record<string, unknown>>) => new Set(rows.map((r) => r.id));

describe('the simulator v3 world over HTTP', () => {
  it("serves every account a world of its own, each application naming that account's jobs, sources and stages", async () => {
    const sim = await startSim({
      shape: 'v3',
      rateLimit: null,
      dataset: { counts: { applications: 120 } },
      accounts: [
        {
          name: 'acme',
          clientId: 'acme-client',
          clientSecrets: ['acme-secret'],
          dataset: { seed: 5, idOffset: 1_000_000, counts: { applications: 40 } },
        },
      ],
    });
    const mine = await servedWorld(sim);
    const theirs = await servedWorld(sim, { clientId: 'acme-client', clientSecret: 'acme-secret' });
    expect(mine.applications).toHaveLength(120);
    expect(theirs.applications).toHaveLength(40);
    for (const world of [mine, theirs]) {
      const jobs = ids(world.jobs ?? []);
      const stages = new Map((world.job_interview_stages ?? []).map((s) => [s.id, s]));
      const apps = new Map((world.applications ?? []).map((a) => [a.id, a]));
      for (const a of world.applications ?? [])
        if (a.job_id !== null) expect(jobs.has(a.job_id)).toBe(true);
      for (const row of world.application_stages ?? []) {
        const app = apps.get(row.application_id);
        expect(stages.get(row.job_interview_stage_id)?.job_id).toBe(app?.job_id);
      }
      for (const resource of WORLD_RESOURCES)
        expect(world[resource]?.length, resource).toBeGreaterThan(0);
    }
    for (const resource of ['applications', 'application_stages', 'offers', 'openings'])
      for (const id of ids(theirs[resource] ?? []))
        expect(ids(mine[resource] ?? []).has(id)).toBe(false);
  });

  it('lists the built-in rejection reasons and service users only when asked, on every page of the walk', async () => {
    const sim = await startSim({ shape: 'v3', rateLimit: null });
    const plain = await servedRecords(sim, 'rejection_reasons');
    const token = await simulatorToken(sim);
    const pages: Array<Array<Record<string, unknown>>> = [];
    let url: string | undefined =
      `${sim.url}/v3/rejection_reasons?per_page=2&include_defaults=true`;
    while (url) {
      const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      pages.push((await res.json()) as Array<Record<string, unknown>>);
      url = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
    }
    const all = pages.flat();
    expect(pages.length).toBeGreaterThan(3);
    expect(all.length).toBe(plain.length + 3);
    expect(all.map((r) => (r.type as { key: string }).key)).toContain('NONE_SPECIFIED');
    const users = await servedRecords(sim, 'users');
    const everyone = await servedRecords(sim, 'users', { query: 'show_service_accounts=true' });
    expect(everyone.length).toBeGreaterThan(users.length);
  });

  it('after an advance, an updated_at=gte walk lists what changed and a full walk no longer lists the deleted application', async () => {
    const sim = await startSim({
      shape: 'v3',
      rateLimit: null,
      dataset: { counts: { applications: 200 } },
    });
    const before = await servedRecords(sim, 'applications');
    const since = new Date().toISOString();
    const report = sim.dataset.advance();
    const changed = await servedRecords(sim, 'applications', { query: `updated_at=gte|${since}` });
    const expected = [...report.moved, ...report.rejected, ...report.hired, ...report.added].map(
      (i) => sim.dataset.idOf('applications', i),
    );
    expect([...ids(changed)].sort()).toEqual([...new Set(expected)].sort());
    const after = await servedRecords(sim, 'applications');
    const deleted = sim.dataset.idOf('applications', report.deleted);
    expect(ids(before).has(deleted)).toBe(true);
    expect(ids(after).has(deleted)).toBe(false);
    expect(after.length).toBe(before.length + report.added.length - 1);
    const stageRows = await servedRecords(sim, 'application_stages', {
      query: `updated_at=gte|${since}`,
    });
    expect(stageRows.some((r) => r.current === false && r.exited_at === null)).toBe(true);
  });
});

describe('hiresync simulate --shape v3', () => {
  it('sizes the world from --applications and prints its lists', async () => {
    const run = await runSimulate([
      '--shape',
      'v3',
      '--applications',
      '60',
      '--rate-limit',
      'none',
    ]);
    try {
      expect(run.out).toMatch(/v3 world: 60 applications over 4 jobs/);
      expect(run.out).toContain('/v3/application_stages');
      const url = /listening on (\S+)/.exec(run.out)?.[1] as string;
      const res = await fetch(`${url}/oauth/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from('demo-client:demo-secret').toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials',
      });
      const { access_token } = (await res.json()) as { access_token: string };
      const apps = await fetch(`${url}/v3/applications?per_page=500`, {
        headers: { authorization: `Bearer ${access_token}` },
      });
      expect((await apps.json()) as unknown[]).toHaveLength(60);
    } finally {
      await run.stop();
    }
  });
});
