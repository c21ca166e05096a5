import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANALYTICS_RESOURCES,
  BUILT_IN_RESOURCES,
  catalogOf,
  declarationOf,
} from '../../src/resources/index.js';
import { migrateAll } from '../../src/warehouse/setup/migrate-all.js';
import {
  type AccountsHarness,
  secretOf,
  startAccountsHarness,
  targetsOf,
} from '../support/accounts-harness.js';
import {
  type AnalyticsView,
  PIPELINE_AS_OF_COLUMNS,
  VIEW_COLUMNS,
} from '../support/analytics-reference/columns.js';
import { compareRows } from '../support/analytics-reference/compare-rows.js';
import {
  type AnalyticsRecords,
  type ApiRecord,
  bigintOf,
  type DemographicLabel,
  expectedAnalytics,
  pipelineAsOf,
  type RecordVersion,
  type Row,
} from '../support/analytics-reference/index.js';
import {
  analyticsSchemaOf,
  readPipelineAsOf,
  readViews,
  sliceOf,
  VIEW_LISTS,
  type ViewAnswers,
} from '../support/analytics-views.js';
import { servedWorld } from '../support/world-client.js';

// Each analytics view of two accounts, compared row for row with rows the
// test computes in TypeScript (test/support/analytics-reference) from the
// records the simulator's v3 world served, fetched over HTTP as any client
// of the API would. The second account proves all_accounts and the
// boundary between accounts: any row of one in the other's views would be
// an unexpected row.

const ACCOUNTS = ['default', 'acme'] as const;
const CATALOG = catalogOf(...BUILT_IN_RESOURCES.values(), ...ANALYTICS_RESOURCES.values());
/** The lists the views read, fetched from the API (users and offices are read by none). */
const LISTS = [
  ...VIEW_LISTS,
  'jobs',
  'job_posts',
  'tracking_links',
  'sources',
  'referrers',
  'job_boards',
];

let h: AccountsHarness;
/** The records each account's API served after each sync, and each sync's bounds (epoch ms). */
const served: Record<string, Array<Record<string, ApiRecord[]>>> = { default: [], acme: [] };
const syncs: Array<{ start: number; end: number }> = [];
const labels: Record<string, DemographicLabel[]> = { default: [], acme: [] };

/** What hiresync stores of a list's records: those its declaration accepts. */
function storable(name: string, records: readonly ApiRecord[]): ApiRecord[] {
  const declaration = declarationOf(CATALOG, name);
  return records.filter((record) => declaration.validate(record) === undefined);
}

async function fetchServed(account: string): Promise<Record<string, ApiRecord[]>> {
  const clientId = account === 'default' ? 'demo-client' : `${account}-client`;
  const lists = await servedWorld(h.sim, { clientId, clientSecret: secretOf(account) });
  return Object.fromEntries(LISTS.map((name) => [name, storable(name, lists[name] ?? [])]));
}

async function syncAll(mode: 'auto' | 'full'): Promise<void> {
  const start = Date.now();
  const results = await h.sync(targetsOf(ACCOUNTS, h.config.resources), mode);
  const failed = results.filter((r) => !r.ok);
  expect(failed).toEqual([]);
  await migrateAll(h.database.db);
  syncs.push({ start, end: Date.now() });
  for (const account of ACCOUNTS) served[account]?.push(await fetchServed(account));
}

function recordsOf(account: string, sync: number): AnalyticsRecords {
  const lists = served[account]?.[sync] ?? {};
  const list = (name: (typeof LISTS)[number]) => lists[name] ?? [];
  return {
    applications: list('applications'),
    application_stages: list('application_stages'),
    job_interview_stages: list('job_interview_stages'),
    offers: list('offers'),
    openings: list('openings'),
    close_reasons: list('close_reasons'),
    rejection_details: list('rejection_details'),
    rejection_reasons: list('rejection_reasons'),
    eeoc: list('eeoc'),
    demographic_answers: list('demographic_answers'),
    demographic_questions: list('demographic_questions'),
    demographic_answer_options: list('demographic_answer_options'),
    jobs: list('jobs'),
    job_posts: list('job_posts'),
    tracking_links: list('tracking_links'),
    sources: list('sources'),
    referrers: list('referrers'),
    job_boards: list('job_boards'),
    departments: list('departments'),
    demographic_labels: labels[account] ?? [],
  };
}

/**
 * Labels for the first standard question and option (served without a
 * name) of `account`, stored in its demographic_labels, so the views'
 * fallback to them is compared too.
 */
async function labelStandardAnswers(account: string): Promise<void> {
  const records = recordsOf(account, 0);
  const question = records.demographic_questions.find((q) => q.name === null);
  const option = records.demographic_answer_options.find((o) => o.name === null);
  const chosen: DemographicLabel[] = [];
  if (question)
    chosen.push({ kind: 'question', id: bigintOf(question.id) ?? '', label: `${account} asked` });
  if (option)
    chosen.push({ kind: 'option', id: bigintOf(option.id) ?? '', label: `${account} answered` });
  for (const label of chosen) {
    await sql`insert into hiresync.data_demographic_labels (account, kind, id, label)
      values (${account}, ${label.kind}, ${label.id}::bigint, ${label.label})`.execute(
      h.database.db,
    );
  }
  labels[account] = chosen;
}

/**
 * The versions of application_stages hiresync's history holds for `account`,
 * each checked against what the API served: a version written during sync k
 * holds the record served after sync k.
 */
async function stageHistory(account: string): Promise<RecordVersion[]> {
  const { rows } = await sql<{ id: string; valid_from: number; data: ApiRecord }>`
    select id::text as id, (extract(epoch from valid_from) * 1000)::float8 as valid_from, data
    from hiresync.data_application_stages_history
    where account = ${account} and not deleted`.execute(h.database.db);
  return rows.map((row) => {
    const sync = syncs.findIndex(
      (s) => row.valid_from >= s.start - 1 && row.valid_from <= s.end + 1,
    );
    expect(sync, `version of ${row.id} written during a sync`).toBeGreaterThanOrEqual(0);
    const servedThen = served[account]?.[sync]?.application_stages?.find(
      (r) => bigintOf(r.id) === row.id,
    );
    expect(row.data, `version of ${row.id} as served`).toEqual(servedThen);
    return { id: row.id, validFrom: row.valid_from, record: row.data };
  });
}

/** Expects no mismatch at all, listing every one (of every view compared) when there are. */
function expectNoMismatch(mismatches: readonly string[]): void {
  expect(mismatches, `${mismatches.length} mismatches`).toEqual([]);
}

/** The moment between the two syncs whose funnel pipeline_as_of shows (epoch ms). */
let t1 = 0;
/** What the views answered after the second sync: each account's own, and all_accounts'. */
const answers: Record<string, ViewAnswers> = {};
const asOf: Record<string, Row[]> = {};
const histories: Record<string, RecordVersion[]> = {};

beforeAll(async () => {
  h = await startAccountsHarness({
    accounts: ['acme'],
    env: {
      HIRESYNC_RESOURCES: '@default,@analytics',
      HIRESYNC_PER_PAGE: '500',
      HIRESYNC_EXTRA_WALKS: 'job_posts?active=false',
    },
    simulator: {
      shape: 'v3',
      rateLimit: null,
      tokenEndpointWindow: { limit: 1000, windowMs: 60_000 },
      dataset: { seed: 5, counts: { applications: 100 } },
      accounts: [
        {
          name: 'acme',
          clientId: 'acme-client',
          clientSecrets: [secretOf('acme')],
          dataset: { seed: 23, idOffset: 1_000_000, counts: { applications: 60 } },
        },
      ],
    },
  });
  await syncAll('auto');
  for (const account of ACCOUNTS) await labelStandardAnswers(account);
  const { rows } = await sql<{ now: number }>`
    select (extract(epoch from clock_timestamp()) * 1000)::float8 as now`.execute(h.database.db);
  t1 = rows[0]?.now ?? Number.NaN;
  for (const account of ACCOUNTS) {
    const report = (account === 'default' ? h.sim.dataset : h.sim.datasetOf(account)).advance();
    // One stage row left without an exit time: only hiresync's history dates its exit.
    expect(report.silentExit, account).toBeGreaterThanOrEqual(0);
  }
  // Full, so that the records the world deleted are swept as the API no longer lists them.
  await syncAll('full');
  for (const account of ACCOUNTS) {
    answers[account] = await readViews(h.database.db, analyticsSchemaOf(account));
    asOf[account] = await readPipelineAsOf(h.database.db, analyticsSchemaOf(account), t1);
    histories[account] = await stageHistory(account);
  }
  answers.all_accounts = await readViews(h.database.db, 'all_accounts', true);
  asOf.all_accounts = await readPipelineAsOf(h.database.db, 'all_accounts', t1, true);
}, 600_000);

afterAll(async () => {
  await h?.close();
});

/** The expected rows of `account`'s views after the second sync, at `now`. */
function expectedOf(account: string, now: number) {
  return expectedAnalytics(recordsOf(account, 1), { now, stageHistory: histories[account] ?? [] });
}

const VIEWS = Object.keys(VIEW_COLUMNS) as AnalyticsView[];

describe('the analytics views, against answers computed from the records served', () => {
  it.each(ACCOUNTS)(
    '%s: every view answers the expected rows, and none of the other account',
    (account) => {
      const own = answers[account];
      if (!own) throw new Error(`no answers of ${account}`);
      const expected = expectedOf(account, own.now);
      expectNoMismatch(
        VIEWS.flatMap((view) =>
          compareRows(view, VIEW_COLUMNS[view], expected[view], own.views[view]),
        ),
      );
    },
  );

  it.each(ACCOUNTS)(
    '%s: pipeline_as_of a time between the syncs answers the funnel of the records then served',
    (account) => {
      const expected = pipelineAsOf(recordsOf(account, 0));
      expectNoMismatch(
        compareRows('pipeline_as_of', PIPELINE_AS_OF_COLUMNS, expected, asOf[account] ?? []),
      );
    },
  );

  it('the served worlds hold the edge cases the views must get right', () => {
    const rows = (view: AnalyticsView) =>
      ACCOUNTS.flatMap((account) => expectedOf(account, answers[account]?.now ?? 0)[view]);
    const values = (view: AnalyticsView, column: string) =>
      new Set(rows(view).map((r) => r[column]));
    const served = ACCOUNTS.map((account) => ({
      now: recordsOf(account, 1),
      before: recordsOf(account, 0),
    }));
    const ids = (list: readonly ApiRecord[]) => new Set(list.map((r) => r.id));
    expect(
      served.some((w) => w.now.applications.some((a) => a.prospect === true)),
      'prospects',
    ).toBe(true);
    expect(
      served.some((w) => w.before.applications.some((a) => !ids(w.now.applications).has(a.id))),
      'an application deleted',
    ).toBe(true);
    const offersPerApplication = new Map<unknown, number>();
    for (const o of served.flatMap((w) => w.now.offers)) {
      offersPerApplication.set(
        o.application_id,
        (offersPerApplication.get(o.application_id) ?? 0) + 1,
      );
    }
    expect(
      Math.max(...offersPerApplication.values()),
      'several offers of one application',
    ).toBeGreaterThan(1);
    expect(values('source_of_hire', 'source_id').has(null), 'applications without a source').toBe(
      true,
    );
    expect(
      rows('source_of_hire_by_tracking_link').some((r) => Number(r.ambiguous_applications) > 0),
      'ambiguous applications',
    ).toBe(true);
    expect(values('time_in_stage', 'entered_at_source')).toEqual(new Set(['api', 'created_at']));
    expect(values('time_in_stage', 'exited_at_source')).toEqual(new Set(['api', 'history', null]));
    expect(values('time_to_hire', 'hired_at_source')).toEqual(new Set(['opening', 'offer']));
    expect(values('time_to_fill', 'filled')).toEqual(new Set([true, false]));
    expect(
      rows('offer_acceptance').some((r) => Number(r.declined) > 0),
      'declined offers',
    ).toBe(true);
    expect(values('diversity_funnel', 'suppressed')).toEqual(new Set([true, false]));
    const labelled = new Set(
      ACCOUNTS.flatMap((account) => (labels[account] ?? []).map((l) => l.label)),
    );
    const shown = rows('diversity_funnel').flatMap((r) => [r.question, r.answer]);
    expect(
      shown.filter((text) => labelled.has(String(text))).length,
      'local labels',
    ).toBeGreaterThan(0);
  });

  it('the world changed between the syncs: the funnel then differs from the funnel now', () => {
    for (const account of ACCOUNTS) {
      const then = pipelineAsOf(recordsOf(account, 0));
      const now = pipelineAsOf(recordsOf(account, 1));
      expect(
        compareRows('pipeline', PIPELINE_AS_OF_COLUMNS, then, now).length,
        account,
      ).toBeGreaterThan(0);
    }
  });

  it("all_accounts: each account's slice is that account's own view and the expected rows, account first", async () => {
    const all = answers.all_accounts;
    if (!all) throw new Error('no answers of all_accounts');
    const mismatches: string[] = [];
    for (const account of ACCOUNTS) {
      const expected = expectedOf(account, all.now);
      for (const view of VIEWS) {
        const slice = sliceOf(all.views[view], account);
        const name = `all_accounts.${view} (${account})`;
        mismatches.push(...compareRows(name, VIEW_COLUMNS[view], expected[view], slice));
        // Days to now() differ between two transactions: time_in_stage is held to the expected rows only.
        if (view !== 'time_in_stage') {
          const own = answers[account]?.views[view] ?? [];
          mismatches.push(
            ...compareRows(`${name} against its own`, VIEW_COLUMNS[view], own, slice),
          );
        }
      }
      const then = pipelineAsOf(recordsOf(account, 0));
      const slice = sliceOf(asOf.all_accounts ?? [], account);
      mismatches.push(
        ...compareRows(
          `all_accounts.pipeline_as_of (${account})`,
          PIPELINE_AS_OF_COLUMNS,
          then,
          slice,
        ),
      );
    }
    expectNoMismatch(mismatches);
    for (const view of VIEWS) {
      expect(new Set(all.views[view].map((r) => r.account)), view).toEqual(new Set(ACCOUNTS));
    }
    const { rows } = await sql<{ table_name: string; column_name: string }>`
      select table_name, column_name from information_schema.columns
      where table_schema = 'all_accounts' and ordinal_position = 1
        and table_name = any(${VIEWS})`.execute(h.database.db);
    expect(rows.map((r) => r.column_name)).toEqual(VIEWS.map(() => 'account'));
  });
});
