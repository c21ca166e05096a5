import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { CommandContext } from '../../src/commands/command.js';
import { simulate } from '../../src/commands/simulate.js';
import { UsageError } from '../../src/errors.js';
import { BUILT_IN_RESOURCES, catalogOf } from '../../src/resources/index.js';
import { defineJsonResource } from '../../src/resources/json-resource.js';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import { Dataset } from '../../src/simulator/dataset.js';
import type { ExtraResource, ValueKind } from '../../src/simulator/extra-resource.js';
import { EXTRA_RESOURCE_NAMES, EXTRA_RESOURCES } from '../../src/simulator/extra-resources.js';
import { simulatedAccounts } from '../../src/simulator/simulated-accounts.js';
import type { SimulatorOptions } from '../../src/simulator/simulator-options.js';
import { runSimulate } from '../support/run-simulate.js';

const started: ApiSimulator[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((sim) => sim.close()));
});

async function startSim(options: SimulatorOptions = {}): Promise<ApiSimulator> {
  const sim = await ApiSimulator.start(options);
  started.push(sim);
  return sim;
}

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** A token by the client credentials grant. */
async function clientToken(
  sim: ApiSimulator,
  clientId = 'demo-client',
  secret = 'demo-secret',
): Promise<string> {
  const res = await fetch(`${sim.authUrl}/token`, {
    method: 'POST',
    headers: {
      authorization: basic(clientId, secret),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

type Row = Record<string, unknown>;

interface Answer {
  status: number;
  records: Row[];
  next: string | undefined;
}

/** One list request (a path, or a next link's full URL). */
async function list(sim: ApiSimulator, token: string, pathOrUrl: string): Promise<Answer> {
  const url = pathOrUrl.startsWith('http') ? pathOrUrl : `${sim.url}${pathOrUrl}`;
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json()) as unknown;
  const next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
  return { status: res.status, records: Array.isArray(body) ? (body as Row[]) : [], next };
}

/** Every record of a list, following next links. */
async function walk(sim: ApiSimulator, token: string, path: string): Promise<Row[]> {
  const records: Row[] = [];
  let target: string | undefined = path;
  while (target) {
    const page = await list(sim, token, target);
    expect(page.status).toBe(200);
    records.push(...page.records);
    target = page.next;
  }
  return records;
}

/** The records a dataset holds, in the API's order. */
function served(ds: Dataset, resource: string): unknown[] {
  return [...ds.presentIndexes(resource)].map((i) => ds.record(resource, i));
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?Z$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

function isObject(value: unknown): value is Row {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether a non-null value is of the kind a key declares. */
function fits(kind: ValueKind, value: unknown): boolean {
  switch (kind) {
    case 'integer':
      return Number.isSafeInteger(value);
    case 'decimal':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'timestamp':
      return typeof value === 'string' && TIMESTAMP.test(value) && !Number.isNaN(Date.parse(value));
    case 'date':
      return (
        typeof value === 'string' &&
        DATE.test(value) &&
        new Date(`${value}T00:00:00Z`).toISOString().startsWith(value)
      );
    case 'text':
      return typeof value === 'string';
    case 'object':
      return isObject(value);
    case 'array':
      return Array.isArray(value);
    case 'mixed':
      return Number.isSafeInteger(value) || typeof value === 'string';
    case 'null':
      return false;
  }
}

/** Values of `key` over `records`, nulls and absences left out. */
function valuesOf(records: Row[], key: string): unknown[] {
  return records.map((r) => r[key]).filter((v) => v !== undefined && v !== null);
}

describe('extra resources of the simulator', () => {
  it('pages through applications and candidates by descending id, every record once', async () => {
    const sim = await startSim({ dataset: { counts: { applications: 237, candidates: 181 } } });
    const token = await clientToken(sim);
    const ds = sim.dataset;
    ds.remove('applications', 100);
    for (const [resource, size] of [
      ['applications', 237],
      ['candidates', 181],
    ] as const) {
      const records = await walk(sim, token, `/v3/${resource}?per_page=50`);
      const ids = records.map((r) => r.id as number);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toEqual([...ids].sort((a, b) => b - a));
      expect(records).toEqual(served(ds, resource));
      expect(ids.length).toBe(resource === 'applications' ? size - 1 : size);
      expect(ids.every((id) => id > 2 ** 32)).toBe(true);
    }
    expect(
      sim.stats.receivedTargets.filter((t) => t.startsWith('/v3/applications?cursor=')),
    ).toHaveLength(4);
    // A cursor of one list is refused by another.
    const first = await list(sim, token, '/v3/applications?per_page=10');
    const cursor = new URL(first.next as string).search;
    expect((await list(sim, token, `/v3/candidates${cursor}`)).status).toBe(422);
  });

  it('serves each account applications and candidates of its own', async () => {
    const sim = await startSim({ accounts: simulatedAccounts(2, { records: 15 }) });
    const [one, two] = [
      await clientToken(sim, 'acct001-client', 'acct001-secret'),
      await clientToken(sim, 'acct002-client', 'acct002-secret'),
    ];
    for (const resource of ['applications', 'candidates']) {
      const a = await walk(sim, one, `/v3/${resource}?per_page=4`);
      const b = await walk(sim, two, `/v3/${resource}?per_page=4`);
      expect(a).toHaveLength(15);
      expect(b).toHaveLength(15);
      expect(a).toEqual(served(sim.datasetOf('acct001'), resource));
      expect(b).toEqual(served(sim.datasetOf('acct002'), resource));
      const idsOfA = new Set(a.map((r) => r.id));
      expect(b.some((r) => idsOfA.has(r.id))).toBe(false);
      // Not the same records under other ids: the contents differ too.
      const strip = (rows: Row[]) => rows.map(({ id: _, ...rest }) => JSON.stringify(rest));
      expect(strip(a)).not.toEqual(strip(b));
      // A cursor of account one is no good to account two.
      const page = await list(sim, one, `/v3/${resource}?per_page=4`);
      expect((await list(sim, two, page.next as string)).status).toBe(422);
    }
    // The default account keeps 250 of each.
    expect(sim.dataset.size('candidates')).toBe(250);
  });

  it('gives only records added after the start the late keys, pronouns and location', async () => {
    const sim = await startSim({ dataset: { counts: { applications: 40, candidates: 40 } } });
    const token = await clientToken(sim);
    const before = await walk(sim, token, '/v3/candidates?per_page=100');
    expect(before.some((r) => 'pronouns' in r)).toBe(false);
    expect((await walk(sim, token, '/v3/applications')).some((r) => 'location' in r)).toBe(false);

    const since = new Date(Date.now() - 1).toISOString();
    const grown = sim.dataset.grow('candidates', 3);
    sim.dataset.grow('applications', 2);
    const after = await walk(sim, token, '/v3/candidates?per_page=100');
    expect(after).toHaveLength(43);
    const late = after.filter((r) => 'pronouns' in r);
    expect(late.map((r) => r.id)).toEqual([...grown].reverse());
    for (const r of late) expect(['she/her', 'he/him', 'they/them']).toContain(r.pronouns);
    // The older records are as they were.
    expect(after.filter((r) => !('pronouns' in r))).toEqual(before);
    const applications = await walk(sim, token, '/v3/applications');
    expect(applications.filter((r) => isObject(r.location)).map((r) => r.id)).toEqual(
      applications.slice(0, 2).map((r) => r.id),
    );
    // An incremental walk finds exactly the added records.
    const changed = await walk(sim, token, `/v3/candidates?updated_at=gte|${since}`);
    expect(changed.map((r) => r.id)).toEqual([...grown].reverse());
  });

  it('holds every declared shape: objects, arrays, _at, _on, booleans, decimals, a mixed key', async () => {
    const sim = await startSim({
      dataset: { counts: Object.fromEntries(EXTRA_RESOURCE_NAMES.map((name) => [name, 120])) },
    });
    const token = await clientToken(sim);
    sim.dataset.grow('candidates', 1);
    sim.dataset.grow('applications', 1);
    const seen: Record<string, Row[]> = {};
    for (const extra of EXTRA_RESOURCES.values()) {
      const records = await walk(sim, token, `${extra.path}?per_page=500`);
      seen[extra.name] = records;
      checkDeclaredKeys(extra, records);
    }
    const candidates = seen.candidates ?? [];
    const applications = seen.applications ?? [];

    // Nested objects, an object within an object, and arrays of objects.
    const sources = valuesOf(applications, 'source') as Row[];
    expect(sources.length).toBeGreaterThan(0);
    expect(sources.every((s) => Number.isSafeInteger(s.id) && isObject(s.type))).toBe(true);
    const emails = candidates.flatMap((c) => c.emails as unknown[]);
    expect(emails.every((e) => isObject(e) && typeof e.value === 'string')).toBe(true);
    expect(candidates.some((c) => (c.addresses as unknown[]).length === 0)).toBe(true);
    expect(candidates.some((c) => isObject((c.addresses as unknown[])[0]))).toBe(true);
    expect(applications.some((a) => isObject((a.jobs as unknown[])[0]))).toBe(true);
    // Arrays of scalars.
    const tags = candidates.flatMap((c) => c.tags as unknown[]);
    expect(tags.length).toBeGreaterThan(0);
    expect(tags.every((t) => typeof t === 'string')).toBe(true);
    const applicationIds = candidates.flatMap((c) => c.application_ids as unknown[]);
    expect(applicationIds.every((id) => Number.isSafeInteger(id))).toBe(true);
    // Timestamps with microseconds and in whole seconds; some null.
    const lastActivity = valuesOf(candidates, 'last_activity_at') as string[];
    expect(lastActivity.some((t) => /\.\d{6}Z$/.test(t))).toBe(true);
    expect(lastActivity.some((t) => /:\d{2}Z$/.test(t))).toBe(true);
    expect(applications.some((a) => a.rejected_at === null)).toBe(true);
    expect(valuesOf(applications, 'rejected_at').length).toBeGreaterThan(0);
    // Dates.
    expect(valuesOf(candidates, 'available_on').length).toBeGreaterThan(0);
    expect(valuesOf(applications, 'expected_start_on').length).toBeGreaterThan(0);
    // Booleans, both ways.
    expect(new Set(candidates.map((c) => c.is_private))).toEqual(new Set([true, false]));
    expect(new Set(applications.map((a) => a.prospect))).toEqual(new Set([true, false]));
    // Decimals beside whole numbers, and nulls.
    const scores = valuesOf(applications, 'score') as number[];
    expect(scores.some((s) => !Number.isInteger(s))).toBe(true);
    expect(scores.some((s) => Number.isInteger(s))).toBe(true);
    expect(scores.every((s) => s >= 1 && s <= 5 && Number.isInteger(s * 4))).toBe(true);
    expect(applications.some((a) => a.score === null)).toBe(true);
    // A key whose values do not all parse as one type.
    for (const rows of [candidates, applications]) {
      const refs = valuesOf(rows, 'external_ref');
      expect(refs.some((r) => Number.isSafeInteger(r))).toBe(true);
      expect(refs.some((r) => typeof r === 'string' && Number.isNaN(Number(r)))).toBe(true);
    }
    // A key that never holds a value.
    expect(candidates.every((c) => 'photo_url' in c && c.photo_url === null)).toBe(true);
    // Offers nest decimals in an object; departments form a tree.
    const offers = seen.offers ?? [];
    expect(offers.some((o) => isObject(o.custom_fields) && isObject(o.custom_fields.salary))).toBe(
      true,
    );
    const departments = seen.departments ?? [];
    const ids = new Set(departments.map((d) => d.id));
    expect(departments.filter((d) => d.parent_id === null)).toHaveLength(1);
    expect(departments.every((d) => d.parent_id === null || ids.has(d.parent_id))).toBe(true);
  });

  it('serves only the extra resources the options choose, with their counts', async () => {
    const sim = await startSim({
      extraResources: ['candidates', 'departments'],
      dataset: { counts: { candidates: 7, departments: 3 } },
    });
    const token = await clientToken(sim);
    expect(await walk(sim, token, '/v3/candidates')).toHaveLength(7);
    expect(await walk(sim, token, '/v3/departments')).toHaveLength(3);
    expect((await list(sim, token, '/v3/applications')).status).toBe(404);
    expect((await list(sim, token, '/v3/offers')).status).toBe(404);
    expect(sim.extraListPaths).toEqual(['/v3/candidates', '/v3/departments']);
    // The declared lists are as they were.
    expect(await walk(sim, token, '/v3/jobs')).toEqual(served(sim.dataset, 'jobs'));

    const none = await startSim({ extraResources: [] });
    const noneToken = await clientToken(none);
    for (const name of EXTRA_RESOURCE_NAMES)
      expect((await list(none, noneToken, `/v3/${name}`)).status).toBe(404);
    expect(none.extraListPaths).toEqual([]);
    expect([...none.dataset.extraResources.keys()]).toEqual([]);

    await expect(ApiSimulator.start({ extraResources: ['scorecards'] })).rejects.toThrow(
      /no extra resource "scorecards"/,
    );
    expect(() => new Dataset({ extraResources: ['scorecards'] })).toThrow(/applications/);
  });

  it('serves all extra resources by default, and a name the catalog declares as declared', async () => {
    expect([...new Dataset().extraResources.keys()]).toEqual(EXTRA_RESOURCE_NAMES);
    const candidates = defineJsonResource({ name: 'candidates', description: 'test' });
    const sim = await startSim({
      dataset: { resources: catalogOf(...BUILT_IN_RESOURCES.values(), candidates), counts: {} },
    });
    const token = await clientToken(sim);
    const [first] = (await list(sim, token, '/v3/candidates?per_page=1')).records;
    expect(Object.keys(first ?? {})).toEqual(['id', 'version', 'created_at', 'updated_at']);
    expect((await list(sim, token, '/v3/applications?per_page=1')).records).toHaveLength(1);
    expect(sim.extraListPaths).toEqual(['/v3/applications', '/v3/offers', '/v3/departments']);
  });

  it('is the same data for the same seed and counts', () => {
    const a = new Dataset({ seed: 9, counts: { applications: 30 } });
    const b = new Dataset({ seed: 9, counts: { applications: 30 } });
    const c = new Dataset({ seed: 10, counts: { applications: 30 } });
    expect(served(a, 'applications')).toEqual(served(b, 'applications'));
    expect(served(a, 'applications')).not.toEqual(served(c, 'applications'));
  });
});

/**
 * Every key seen is declared and holds its kind (or null); every declared key
 * but the late ones is seen; `_at` keys hold timestamps and `_on` keys dates.
 */
function checkDeclaredKeys(extra: ExtraResource, records: Row[]): void {
  expect(records.length).toBeGreaterThan(0);
  const seenKeys = new Set(records.flatMap((r) => Object.keys(r)));
  for (const key of seenKeys) expect(Object.keys(extra.keys), extra.name).toContain(key);
  for (const [key, kind] of Object.entries(extra.keys)) {
    if (!extra.lateKeys.includes(key)) expect(seenKeys, `${extra.name}.${key}`).toContain(key);
    if (key.endsWith('_at')) expect(kind).toBe('timestamp');
    if (key.endsWith('_on')) expect(kind).toBe('date');
    for (const value of valuesOf(records, key))
      expect(fits(kind, value), `${extra.name}.${key} = ${JSON.stringify(value)}`).toBe(true);
  }
  for (const key of extra.lateKeys) expect(seenKeys, `${extra.name}.${key} (late)`).toContain(key);
}

describe('hiresync simulate', () => {
  it("prints the extra resources' paths and serves their counts", async () => {
    const { out, stop } = await runSimulate(['--candidates', '5']);
    try {
      expect(out).toContain(
        '  more lists (extra resources): /v3/applications /v3/candidates /v3/offers /v3/departments\n',
      );
      expect(out).toMatch(/^hiresync simulator listening on \S+\n {2}HIRESYNC_BASE_URL=/);
      const url = /listening on (\S+)/.exec(out)?.[1] as string;
      const res = await fetch(`${url}/oauth/token`, {
        method: 'POST',
        headers: {
          authorization: basic('demo-client', 'demo-secret'),
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials',
      });
      const { access_token } = (await res.json()) as { access_token: string };
      const get = (path: string) =>
        fetch(`${url}${path}`, { headers: { authorization: `Bearer ${access_token}` } });
      expect(((await (await get('/v3/candidates')).json()) as unknown[]).length).toBe(5);
      expect(((await (await get('/v3/offers')).json()) as unknown[]).length).toBe(3);
    } finally {
      await stop();
    }
  });

  it('serves only the extra resources --extra-resources names, none with none', async () => {
    const some = await runSimulate(['--extra-resources', 'applications']);
    await some.stop();
    expect(some.out).toContain('  more lists (extra resources): /v3/applications\n');
    const none = await runSimulate(['--extra-resources', 'none']);
    await none.stop();
    expect(none.out).not.toContain('extra resources');
  });

  it('refuses an unknown name in --extra-resources', async () => {
    const context: CommandContext = {
      env: {},
      stdout: { write: () => undefined },
      stderr: { write: () => undefined },
      signals: new EventEmitter(),
    };
    await expect(simulate.run(['--extra-resources', 'scorecards'], context)).rejects.toThrow(
      new UsageError(
        '--extra-resources takes a comma-separated list of applications, candidates, offers, departments, or none; got "scorecards"',
      ),
    );
  });
});
