/**
 * Issue 23's choice of storage layout, measured against the alternatives: for
 * N accounts of 40 tracking links and 3 job boards, 3 sources and 3 referrers
 * each (plain SQL, generate_series), in a fresh database per layout and N:
 *
 * - A. per-account schemas, each with its own four tables (primary keys on
 *   id; tracking_links indexed on job_id, job_post_id and token; fillfactor
 *   80) and its tracking_links_flat, and schema all_accounts holding unions
 *   (union all) of the N accounts' tracking_links_flat and job_boards: the
 *   layout before shared storage;
 * - B. shared tables hiresync.data_<table> keyed by (account, id),
 *   hash-partitioned on account into 8 partitions, each account's schema
 *   holding views of its rows (as `accounts add` makes them, through
 *   src/warehouse/layout/account-views.ts) and all_accounts views over the shared
 *   tables (as migrations/hiresync/0009 and src/warehouse/layout/all-accounts-views.ts
 *   make them): the layout chosen;
 * - C. the same with 16 hash partitions; F. with 64;
 * - D. the same shared tables LIST-partitioned, one partition per account;
 * - E. the same shared tables, not partitioned.
 *
 * For each: the DDL's time (A's all_accounts unions in it, a transaction
 * each); the rows' (in transactions of 50 accounts, as one statement across
 * thousands of list partitions or schemas would exhaust the lock table);
 * adding an account (A and D: its tables or partitions, and its schema; B, C,
 * E: its schema of views; A then makes its unions again), with the locks it
 * holds and its lock mode on the shared tracking links; the reads of
 * bench/accounts-layout.ts (count(*) of all_accounts.tracking_links_flat,
 * links per job board company across accounts, one account's
 * tracking_links_flat through its view), each warmed once then timed 3 times
 * (median) in a transaction, with the locks it holds before commit, or the
 * error it fails with (a count that misses rows stops the benchmark);
 * removing an account (B, C, E: delete its rows and drop its schema of views;
 * D: drop its partitions and schema; A: make the unions again without it,
 * then drop its schema). Adding and removing: 3 accounts each, the median.
 * Prints a markdown table; every database is dropped after its layout.
 *
 * The server: a Postgres cluster of its own (initdb from this machine's
 * binaries into a temp dir, every setting at its default), because reads of
 * A and D exhaust the lock table, which is the whole cluster's: on a shared
 * server, other sessions would fail beside them. --url URL runs on that
 * server instead (its admin database; one database per layout, dropped after).
 *
 *   npm run build && node dist/bench/storage-alternatives.js
 *     [--accounts 1000,5000] [--layouts A,B,C,D,E] [--a-accounts LIST] [--url URL]
 *
 * --accounts: default 1,000 and 5,000 (about 10 min with 100 added; D's DDL
 * at 5,000 takes the most, 3-4 min). --a-accounts: the N of layout A, when
 * they differ from --accounts (A's DDL makes 20 relations per account).
 */
import { cpus } from 'node:os';
import type pg from 'pg';
import {
  accountViewsText,
  ident,
  literal,
  type SharedTable,
} from '../src/warehouse/layout/account-views.js';
import { trackingLinksFlatSelect } from '../src/warehouse/layout/derived-views.js';
import { CROSS_ACCOUNT_QUERIES } from './accounts-layout.js';
import { PrivatePostgres } from './private-servers.js';
import { fmt, freshDatabase, median, postgresClient } from './support.js';

type Table = 'job_boards' | 'referrers' | 'sources' | 'tracking_links';

const BOOKKEEPING: Array<[string, string]> = [
  ['first_synced_at', 'timestamptz not null default now()'],
  ['synced_at', 'timestamptz not null default now()'],
  ['source_run_id', 'bigint'],
  ['source_updated_at', 'timestamptz'],
  ['deleted_at', 'timestamptz'],
  ['last_seen_run_id', 'bigint'],
  ['changed_at', 'timestamptz not null default now()'],
];

/** The four tables of tracking_links_flat, their columns as the warehouse's (account aside). */
const COLUMNS: Record<Table, Array<[string, string]>> = {
  job_boards: [
    ['id', 'bigint not null'],
    ['company_name', 'text'],
    ['url_token', 'text'],
    ['raw', 'jsonb'],
    ...BOOKKEEPING,
  ],
  referrers: [
    ['id', 'bigint not null'],
    ['name', 'text'],
    ['employee_id', 'text'],
    ['raw', 'jsonb'],
    ...BOOKKEEPING,
  ],
  sources: [['id', 'bigint not null'], ['public_name', 'text'], ['raw', 'jsonb'], ...BOOKKEEPING],
  tracking_links: [
    ['id', 'bigint not null'],
    ['token', 'text'],
    ['job_id', 'bigint'],
    ['job_post_id', 'bigint'],
    ['job_board_id', 'bigint'],
    ['related_post_id', 'bigint'],
    ['related_post_type', 'text'],
    ['credited_to_id', 'bigint'],
    ['credited_to_name', 'text'],
    ['credited_to_employee_id', 'text'],
    ['source_id', 'bigint'],
    ['created_at', 'timestamptz'],
    ['updated_at', 'timestamptz'],
    ['raw', 'jsonb not null'],
    ['deleted_at', 'timestamptz'],
    ['first_synced_at', 'timestamptz not null default now()'],
    ['synced_at', 'timestamptz not null default now()'],
    ['last_seen_run_id', 'bigint'],
    ['changed_at', 'timestamptz not null default now()'],
  ],
};
const TABLES = Object.keys(COLUMNS) as Table[];
/** Indexes of tracking_links beyond its key (the account leads them in shared tables). */
const LINK_INDEXES = ['job_id', 'job_post_id', 'token'];

/** Each table's rows of account `a` (a relation of columns i and name): columns, select list, rows. */
const ROWS: Record<Table, { columns: string; select: string; count: number }> = {
  job_boards: {
    columns: 'id, company_name, url_token, raw',
    select: `g, 'Company ' || (a.i + g) % 50, 'board_' || g, jsonb_build_object('id', g)`,
    count: 3,
  },
  referrers: {
    columns: 'id, name, employee_id, raw',
    select: `g, 'Referrer ' || g, 'e' || g, jsonb_build_object('id', g)`,
    count: 3,
  },
  sources: {
    columns: 'id, public_name, raw',
    select: `g, 'Source ' || g, jsonb_build_object('id', g)`,
    count: 3,
  },
  tracking_links: {
    columns:
      'id, token, job_id, job_post_id, job_board_id, credited_to_id, source_id, created_at, updated_at, raw',
    select: `g, md5(a.name || g), 1000 + g % 10, 2000 + g % 20, 1 + g % 3, 1 + g % 3, 1 + g / 3 % 3,
      now() - g * interval '1 day', now(), jsonb_build_object('id', g, 'token', md5(a.name || g))`,
    count: 40,
  },
};

/** Account i's name, also its schema's: acct_00001… (as SQL's 'acct_' || lpad(i::text, 5, '0')). */
const accountName = (i: number) => `acct_${String(i).padStart(5, '0')}`;
const accountsSql = (from: number, to: number) =>
  `(select i, 'acct_' || lpad(i::text, 5, '0') as name from generate_series(${from}, ${to}) i) a`;

const columnsDdl = (table: Table) => COLUMNS[table].map(([name, type]) => `${name} ${type}`);
const fillfactor = (table: Table) => (table === 'tracking_links' ? ' with (fillfactor = 80)' : '');

/** A's per-account DDL: schema, four tables, indexes, tracking_links_flat. */
function accountTablesDdl(account: string): string {
  const s = ident(account);
  return [
    `create schema ${s}`,
    ...TABLES.map(
      (t) =>
        `create table ${s}.${t} (${[...columnsDdl(t), 'primary key (id)'].join(', ')})${fillfactor(t)}`,
    ),
    ...LINK_INDEXES.map((c) => `create index on ${s}.tracking_links (${c})`),
    `create view ${s}.tracking_links_flat as ${flatOf(s)}`,
  ].join(';\n');
}

const flatOf = (s: string) =>
  trackingLinksFlatSelect({
    links: `${s}.tracking_links`,
    boards: `${s}.job_boards`,
    referrers: `${s}.referrers`,
    sources: `${s}.sources`,
  });

/**
 * A's all_accounts: unions of every account's tracking_links_flat and
 * job_boards, a transaction each (A at its best: the layout before rebuilt
 * its ten views in one, whose locks add up).
 */
function unionViewsDdl(accounts: readonly string[]): string[] {
  const union = (relation: string) =>
    accounts
      .map((a) => `select ${literal(a)}::text as account, r.* from ${ident(a)}.${relation} r`)
      .join('\nunion all ');
  return ['tracking_links_flat', 'job_boards'].map(
    (relation) => `create schema if not exists all_accounts;
      create or replace view all_accounts.${relation} as ${union(relation)}`,
  );
}

/** How the shared tables are partitioned on account: hash into n partitions, a list partition per account, or not. */
type Partitioning = { hash: number } | 'list' | 'none';

/** The shared tables (B–E), partitioned as `partitioning` says, and the accounts' registry. */
function sharedTablesDdl(partitioning: Partitioning): string {
  const statements = [
    'create schema hiresync',
    'create table hiresync.accounts (name text primary key)',
  ];
  for (const t of TABLES) {
    const columns = ['account text not null', ...columnsDdl(t), 'primary key (account, id)'];
    const by =
      partitioning === 'none'
        ? fillfactor(t)
        : ` partition by ${partitioning === 'list' ? 'list' : 'hash'} (account)`;
    statements.push(`create table hiresync.data_${t} (${columns.join(', ')})${by}`);
    const partitions = typeof partitioning === 'object' ? partitioning.hash : 0;
    for (let p = 0; p < partitions; p += 1) {
      statements.push(
        `create table hiresync.data_${t}_p${p} partition of hiresync.data_${t}
         for values with (modulus ${partitions}, remainder ${p})${fillfactor(t)}`,
      );
    }
  }
  statements.push(
    ...LINK_INDEXES.map((c) => `create index on hiresync.data_tracking_links (account, ${c})`),
  );
  return statements.join(';\n');
}

/** The shared tables as an account's views see them (src/warehouse/layout/account-views.ts). */
const SHARED: SharedTable[] = TABLES.map((table) => ({
  table,
  comment: null,
  columns: COLUMNS[table].map(([name]) => ({ name, comment: null })),
}));

/** B–E: an account's schema of views (as `accounts add` makes it) and its registration. */
function accountViewsDdl(account: string): string {
  const s = ident(account);
  return `create schema ${s};
    ${accountViewsText(account, account, SHARED)}
    create view ${s}.tracking_links_flat as ${flatOf(s)};
    insert into hiresync.accounts values (${literal(account)})`;
}

/** D: an account's four list partitions. */
const listPartitionsDdl = (account: string) =>
  TABLES.map(
    (t) =>
      `create table hiresync.${ident(`data_${t}_${account}`)} partition of hiresync.data_${t}
       for values in (${literal(account)})${fillfactor(t)}`,
  ).join(';\n');

/** B–E: all_accounts over the shared tables, the accounts shown as in all-accounts-views.ts. */
const SHOWN = `(account = 'default' or account in (select name from hiresync.accounts))`;
const ALL_ACCOUNTS_DDL = `create schema all_accounts;
  create view all_accounts.tracking_links_flat as select * from (${trackingLinksFlatSelect(
    {
      links: 'hiresync.data_tracking_links',
      boards: 'hiresync.data_job_boards',
      referrers: 'hiresync.data_referrers',
      sources: 'hiresync.data_sources',
    },
    { column: 'account' },
  )}) flat where ${SHOWN};
  create view all_accounts.job_boards as select * from hiresync.data_job_boards where ${SHOWN}`;

/** Accounts per transaction when building and loading (keeps a batch's locks far below the table's size). */
const BATCH = 50;

/** A layout: its DDL, rows, and what adding or removing an account takes. */
interface Layout {
  key: string;
  title: string;
  /** The DDL of accounts 1..n, transactions of their own: the accounts' objects, then schema all_accounts. */
  ddl(n: number): { accounts: string[]; allAccounts: string[] };
  /** The rows of accounts from..to, one transaction. */
  load(from: number, to: number): string;
  /** What a new account needs. */
  add(account: string): string;
  /** Removing an account and its rows. */
  remove(account: string): string;
  /** A: all_accounts made again for `accounts` (before a removal, after an addition); else nothing to do. */
  unions?: (accounts: readonly string[]) => string[];
}

function batches(n: number, text: (from: number, to: number) => string): string[] {
  const out: string[] = [];
  for (let from = 1; from <= n; from += BATCH) out.push(text(from, Math.min(n, from + BATCH - 1)));
  return out;
}

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, k) => accountName(from + k));

const loadShared = (from: number, to: number) =>
  TABLES.map(
    (t) =>
      `insert into hiresync.data_${t} (account, ${ROWS[t].columns}) select a.name, ${ROWS[t].select}
       from ${accountsSql(from, to)}, generate_series(1, ${ROWS[t].count}) g`,
  ).join(';\n');

function sharedLayout(key: string, title: string, partitioning: { hash: number } | 'none'): Layout {
  return {
    key,
    title,
    ddl: (n) => ({
      accounts: [
        sharedTablesDdl(partitioning),
        ...batches(n, (from, to) => range(from, to).map(accountViewsDdl).join(';\n')),
      ],
      allAccounts: [ALL_ACCOUNTS_DDL],
    }),
    load: loadShared,
    add: accountViewsDdl,
    remove: (account) =>
      [
        ...TABLES.map((t) => `delete from hiresync.data_${t} where account = ${literal(account)}`),
        `delete from hiresync.accounts where name = ${literal(account)}`,
        `drop schema ${ident(account)} cascade`,
      ].join(';\n'),
  };
}

const LAYOUTS: Layout[] = [
  {
    key: 'A',
    title: 'schemas of tables, unions (before)',
    ddl: (n) => ({
      accounts: batches(n, (from, to) => range(from, to).map(accountTablesDdl).join(';\n')),
      allAccounts: unionViewsDdl(range(1, n)),
    }),
    load: (from, to) =>
      range(from, to)
        .flatMap((account, k) =>
          TABLES.map(
            (t) =>
              `insert into ${ident(account)}.${t} (${ROWS[t].columns}) select ${ROWS[t].select}
               from (select ${from + k} as i, ${literal(account)} as name) a, generate_series(1, ${ROWS[t].count}) g`,
          ),
        )
        .join(';\n'),
    add: accountTablesDdl,
    remove: (account) => `drop schema ${ident(account)} cascade`,
    unions: unionViewsDdl,
  },
  sharedLayout('B', 'shared, 8 hash partitions (chosen)', { hash: 8 }),
  sharedLayout('C', 'shared, 16 hash partitions', { hash: 16 }),
  sharedLayout('F', 'shared, 64 hash partitions', { hash: 64 }),
  {
    key: 'D',
    title: 'shared, a list partition per account',
    ddl: (n) => ({
      accounts: [
        sharedTablesDdl('list'),
        ...batches(n, (from, to) =>
          range(from, to)
            .map((a) => `${listPartitionsDdl(a)};\n${accountViewsDdl(a)}`)
            .join(';\n'),
        ),
      ],
      allAccounts: [ALL_ACCOUNTS_DDL],
    }),
    load: loadShared,
    add: (account) => `${listPartitionsDdl(account)};\n${accountViewsDdl(account)}`,
    remove: (account) =>
      [
        `delete from hiresync.accounts where name = ${literal(account)}`,
        `drop schema ${ident(account)} cascade`,
        ...TABLES.map((t) => `drop table hiresync.${ident(`data_${t}_${account}`)}`),
      ].join(';\n'),
  },
  sharedLayout('E', 'shared, not partitioned', 'none'),
];

/** A statement batch's outcome: its time, the locks it held before commit, or how it failed. */
interface Outcome {
  ms: number;
  locks?: number;
  /** Lock modes held on hiresync.data_tracking_links (the shared table a new account's objects touch). */
  sharedModes?: string;
  failure?: string;
  /** The first column of the first row (of a single statement). */
  value?: unknown;
}

const LOCKS = `select count(*)::int as n,
  string_agg(distinct replace(mode, 'Lock', ''), ', ') filter (where relation = to_regclass('hiresync.data_tracking_links')) as modes
  from pg_locks where pid = pg_backend_pid()`;

/** The error's gist: the lock table's exhaustion named as such. */
function failureOf(error: unknown): string {
  const { message, hint } = error as { message?: string; hint?: string };
  if (/out of shared memory|max_locks_per_transaction/.test(`${message} ${hint}`)) {
    return '**fails**: out of shared memory';
  }
  return `**fails**: ${message}`;
}

/**
 * Runs `text` in a transaction of its own: its time with the commit, and the
 * locks it holds before commit beyond an empty transaction's (`baseline`); a
 * failure is caught and described.
 */
async function timed(client: pg.Client, text: string, baseline = 0): Promise<Outcome> {
  await client.query('begin');
  const at = performance.now();
  try {
    const result = await client.query(text);
    const ran = performance.now() - at;
    const { n, modes } = (await client.query<{ n: number; modes: string | null }>(LOCKS))
      .rows[0] ?? {
      n: 0,
      modes: null,
    };
    const committing = performance.now();
    await client.query('commit');
    return {
      ms: ran + performance.now() - committing,
      locks: n - baseline,
      ...(modes ? { sharedModes: modes } : {}),
      // A single statement's first value (multi-statement texts give an array).
      ...(Array.isArray(result) ? {} : { value: Object.values(result.rows[0] ?? {})[0] }),
    };
  } catch (error) {
    const ms = performance.now() - at;
    await client.query('rollback');
    return { ms, failure: failureOf(error) };
  }
}

/** `timed` of each of `texts`: their total time, or the first failure. */
async function timedAll(client: pg.Client, texts: readonly string[]): Promise<Outcome> {
  let total = 0;
  for (const text of texts) {
    const outcome = await timed(client, text);
    total += outcome.ms;
    if (outcome.failure) return { ...outcome, ms: total };
  }
  return { ms: total };
}

/** `timed`, warmed once then 3 times: the median time (or the first failure). */
async function timedRead(client: pg.Client, text: string, baseline: number): Promise<Outcome> {
  const warm = await timed(client, text, baseline);
  if (warm.failure) return warm;
  const runs = [];
  for (let i = 0; i < 3; i += 1) runs.push(await timed(client, text, baseline));
  return medianOf(runs);
}

/** Outcomes of the same work as one: the median time, the last locks, or the first failure. */
function medianOf(outcomes: readonly Outcome[]): Outcome {
  const failed = outcomes.find((o) => o.failure);
  if (failed) return failed;
  const last = outcomes.at(-1);
  return { ...last, ms: median(outcomes.map((o) => o.ms)) };
}

/** Accounts added, then removed, each timed: the median is reported. */
const CHANGES = 3;

/** One layout at one N. */
export interface LayoutResult {
  layout: string;
  accounts: number;
  /** The accounts' DDL (all transactions), and all_accounts' on its own. */
  ddl: Outcome;
  allAccounts: Outcome;
  loadMs: number;
  add: Outcome;
  /** A: all_accounts made again with the new account. */
  addUnions?: Outcome;
  /** The reads of CROSS_ACCOUNT_QUERIES, in order. */
  reads: Outcome[];
  remove: Outcome;
  /** A: all_accounts made again without the removed account, before its schema is dropped. */
  removeUnions?: Outcome;
}

const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);

async function measureLayout(admin: string, layout: Layout, n: number): Promise<LayoutResult> {
  const database = await freshDatabase(`alt_${layout.key.toLowerCase()}${n}`, {
    migrate: false,
    admin,
  });
  const client = postgresClient(database.url);
  await client.connect();
  try {
    const { accounts, allAccounts } = layout.ddl(n);
    let ddlMs = 0;
    for (const text of accounts) {
      const outcome = await timed(client, text);
      if (outcome.failure) throw new Error(`layout ${layout.key}, N ${n}: ${outcome.failure}`);
      ddlMs += outcome.ms;
    }
    const views = await timedAll(client, allAccounts);
    log(
      `${layout.key} N=${n}: DDL ${(ddlMs / 1000).toFixed(1)} s, all_accounts ${describe(views)}`,
    );
    let at = performance.now();
    for (const text of batches(n, layout.load)) await client.query(text);
    const loadMs = performance.now() - at;
    at = performance.now();
    await client.query('vacuum (analyze)');
    log(
      `${layout.key} N=${n}: rows ${(loadMs / 1000).toFixed(1)} s, vacuum ${((performance.now() - at) / 1000).toFixed(1)} s`,
    );
    await client.end();

    // A fresh session for the reads, as an analyst's.
    const reader = postgresClient(database.url);
    await reader.connect();
    try {
      await reader.query('begin');
      const baseline = (await reader.query<{ n: number }>(LOCKS)).rows[0]?.n ?? 0;
      await reader.query('commit');
      const reads: Outcome[] = [];
      for (const query of CROSS_ACCOUNT_QUERIES) {
        const text = query.text(accountName(1));
        const read =
          views.failure && !query.one
            ? { ms: 0, failure: 'no all_accounts: its DDL failed' }
            : await timedRead(reader, text, baseline);
        // A count read sees every row it should: the layout is what it claims.
        const expected = ROWS.tracking_links.count * (query.one ? 1 : n);
        if (
          /^\s*select count\(\*\)/.test(text) &&
          !read.failure &&
          Number(read.value) !== expected
        ) {
          throw new Error(
            `layout ${layout.key}, N ${n}: ${text} gave ${read.value}, not ${expected}`,
          );
        }
        reads.push(read);
        log(`${layout.key} N=${n}: ${query.name}: ${describe(read)}`);
      }
      // Accounts N + 1.. added (A's unions made again after each), then
      // accounts 2.. removed (A's unions made again without each, first).
      const adds: Outcome[] = [];
      const addsUnions: Outcome[] = [];
      for (let k = 1; k <= CHANGES; k += 1) {
        adds.push(await timed(reader, layout.add(accountName(n + k)), baseline));
        if (layout.unions) addsUnions.push(await timedAll(reader, layout.unions(range(1, n + k))));
      }
      const removes: Outcome[] = [];
      const removesUnions: Outcome[] = [];
      let remaining = range(1, n + CHANGES);
      for (let k = 2; k < 2 + CHANGES; k += 1) {
        const removed = accountName(k);
        remaining = remaining.filter((a) => a !== removed);
        if (layout.unions) removesUnions.push(await timedAll(reader, layout.unions(remaining)));
        removes.push(await timed(reader, layout.remove(removed), baseline));
      }
      const [add, remove] = [medianOf(adds), medianOf(removes)];
      const addUnions = layout.unions && medianOf(addsUnions);
      const removeUnions = layout.unions && medianOf(removesUnions);
      log(`${layout.key} N=${n}: add ${describe(add)}, remove ${describe(remove)}`);
      return {
        layout: layout.key,
        accounts: n,
        ddl: { ms: ddlMs },
        allAccounts: views,
        loadMs,
        add,
        ...(addUnions ? { addUnions } : {}),
        reads,
        remove,
        ...(removeUnions ? { removeUnions } : {}),
      };
    } finally {
      await reader.end();
    }
  } finally {
    await client.end().catch(() => undefined);
    await database.drop();
  }
}

const ms = (value: number) =>
  value >= 1000 ? `${(value / 1000).toFixed(1)} s` : `${value.toFixed(value < 10 ? 2 : 1)} ms`;

/** An outcome in a table cell: "locks · time", or the failure. */
function describe(outcome: Outcome, { locks = true } = {}): string {
  if (outcome.failure) return `${outcome.failure} (after ${ms(outcome.ms)})`;
  return locks && outcome.locks !== undefined
    ? `${fmt(outcome.locks)} locks · ${ms(outcome.ms)}`
    : ms(outcome.ms);
}

/** The results as a markdown table, a row per layout and N. */
export function resultsTable(results: readonly LayoutResult[]): string {
  const title = (key: string) => LAYOUTS.find((l) => l.key === key)?.title ?? key;
  const lines = [
    "| layout | N | DDL (of which all_accounts) | rows | add one account | count(*) of all_accounts.tracking_links_flat | links per job board company, all accounts | one account's tracking_links_flat | remove one account |",
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const views = r.allAccounts.failure ? r.allAccounts.failure : ms(r.allAccounts.ms);
    const add =
      describe(r.add) +
      (r.add.sharedModes ? ` (${r.add.sharedModes} on data_tracking_links)` : '') +
      (r.addUnions ? `; all_accounts again: ${describe(r.addUnions, { locks: false })}` : '');
    const remove =
      (r.removeUnions
        ? `all_accounts again: ${describe(r.removeUnions, { locks: false })}; then `
        : '') +
      describe(r.remove, { locks: false }) +
      (r.remove.sharedModes ? ` (${r.remove.sharedModes} on data_tracking_links)` : '');
    lines.push(
      `| ${r.layout}. ${title(r.layout)} | ${fmt(r.accounts)} | ${ms(r.ddl.ms + r.allAccounts.ms)} (${views}) | ${ms(r.loadMs)} | ${add} | ${r.reads.map((o) => describe(o)).join(' | ')} | ${remove} |`,
    );
  }
  return lines.join('\n');
}

export interface StorageAlternativesOptions {
  /** N of layouts B–E (and A unless aAccounts). Default 1,000 and 5,000. */
  accounts: number[];
  /** N of layout A. Default: accounts. */
  aAccounts?: number[];
  /** Layout keys. Default all. */
  layouts: string[];
  /** An admin URL of the server to use; default a cluster of the benchmark's own. */
  url?: string;
}

/** Measures each layout at each N, on a server of its own unless `url`. */
export async function storageAlternatives(
  options: StorageAlternativesOptions,
): Promise<{ results: LayoutResult[]; server: string }> {
  const server = options.url ? undefined : await PrivatePostgres.start({ fsync: true });
  const stop = () => {
    server?.close();
    process.exit(130);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const admin = options.url ?? (server as PrivatePostgres).url;
  try {
    const client = postgresClient(admin);
    await client.connect();
    const { rows } = await client.query<{ name: string; setting: string }>(
      `select name, setting from pg_settings
       where name in ('server_version', 'max_locks_per_transaction', 'max_connections', 'max_prepared_transactions', 'shared_buffers')
       order by name`,
    );
    await client.end();
    const results: LayoutResult[] = [];
    const ns = [...new Set([...options.accounts, ...(options.aAccounts ?? [])])];
    for (const n of ns.sort((a, b) => a - b)) {
      for (const layout of LAYOUTS.filter((l) => options.layouts.includes(l.key))) {
        const measured =
          layout.key === 'A' ? (options.aAccounts ?? options.accounts) : options.accounts;
        if (measured.includes(n)) results.push(await measureLayout(admin, layout, n));
      }
    }
    return {
      results,
      server: `${options.url ? 'the server of --url' : "a cluster of the benchmark's own (initdb, default settings)"}: ${rows.map((r) => `${r.name} ${r.setting}`).join(', ')}`,
    };
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    server?.close();
  }
}

function parseArgs(argv: readonly string[]): StorageAlternativesOptions {
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const numbers = (text: string | undefined) => text?.split(',').map(Number);
  const aAccounts = numbers(value('--a-accounts'));
  const url = value('--url');
  return {
    accounts: numbers(value('--accounts')) ?? [1000, 5000],
    ...(aAccounts ? { aAccounts } : {}),
    layouts: value('--layouts')?.split(',') ?? LAYOUTS.map((l) => l.key),
    ...(url ? { url } : {}),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const options = parseArgs(process.argv.slice(2));
  const at = performance.now();
  const { results, server } = await storageAlternatives(options);
  process.stdout.write(
    `Storage layouts, ${fmt(ROWS.tracking_links.count)} tracking links and ${ROWS.job_boards.count} job boards, ${ROWS.sources.count} sources, ${ROWS.referrers.count} referrers per account; ` +
      `${cpus().length} cores, ${server}; ${new Date().toISOString()}, ${((performance.now() - at) / 60_000).toFixed(1)} min\n\n${resultsTable(results)}\n`,
  );
}
