import { timestampUtc } from './casts.js';
import { builtIn, type Moment, records, type Scope } from './scope.js';

/**
 * The common tables (CTEs) of the analytics views: the shared definitions of
 * docs/analytics.md ("Shared definitions") written once. Each reads its
 * records through {@link records} or {@link builtIn}, so every one carries
 * the scope's account condition; each keeps `account` as its first column and
 * every join matches it, so one text serves one account and all accounts.
 */
interface Cte {
  /** The CTEs it reads. */
  readonly uses: readonly string[];
  readonly body: (scope: Scope, moment: Moment) => string;
}

const CTES: Record<string, Cte> = {
  // Not deleted, prospects included (`funnel` says whether it counts in funnels).
  applications: {
    uses: [],
    body: (scope, moment) => `select account, id,
      hiresync.try_bigint(data->'candidate_id') as candidate_id,
      hiresync.try_bigint(data->'job_id') as job_id,
      hiresync.try_bigint(data->'job_post_id') as job_post_id,
      hiresync.try_bigint(data->'source_id') as source_id,
      hiresync.try_bigint(data->'referrer_id') as referrer_id,
      case data->>'status' when 'in_process' then 'active' else data->>'status' end as status,
      ${timestampUtc("data->'created_at'")} as created_at,
      hiresync.try_boolean(data->'prospect') is not true as funnel
    from (${records('applications', scope, moment)}) r`,
  },
  stages: {
    uses: [],
    body: (scope, moment) => `select account, id,
      hiresync.try_bigint(data->'job_id') as job_id,
      data->>'name' as name,
      hiresync.try_bigint(data->'sort_order') as sort_order,
      hiresync.try_boolean(data->'active') as active
    from (${records('job_interview_stages', scope, moment)}) r`,
  },
  // Stage rows of an application: for a stage of the application's own job.
  stage_rows: {
    uses: ['applications', 'stages'],
    body: (scope, moment) => `select r.account, r.id, r.application_id, r.stage_id,
      r.entered_at, r.exited_at, r.current, r.created_at,
      a.job_id, a.funnel, a.status, s.name, s.sort_order
    from (select account, id,
        hiresync.try_bigint(data->'application_id') as application_id,
        hiresync.try_bigint(data->'job_interview_stage_id') as stage_id,
        ${timestampUtc("data->'entered_at'")} as entered_at,
        ${timestampUtc("data->'exited_at'")} as exited_at,
        hiresync.try_boolean(data->'current') as current,
        ${timestampUtc("data->'created_at'")} as created_at
      from (${records('application_stages', scope, moment)}) x) r
    join applications a on a.account = r.account and a.id = r.application_id
    join stages s on s.account = r.account and s.id = r.stage_id and s.job_id = a.job_id`,
  },
  // The highest stage order among an application's stage rows (ties: higher stage id).
  last_stages: {
    uses: ['stage_rows'],
    body: () => `select distinct on (account, application_id)
      account, application_id, stage_id, sort_order, name
    from stage_rows
    order by account, application_id, sort_order desc nulls last, stage_id desc`,
  },
  // A job's stage of the lowest order (ties: lowest id).
  first_stages: {
    uses: ['stages'],
    body: () => `select distinct on (account, job_id) account, job_id, id as stage_id, sort_order
    from stages where job_id is not null
    order by account, job_id, sort_order nulls last, id`,
  },
  interviewed: {
    uses: ['stage_rows', 'first_stages'],
    body: () => `select distinct r.account, r.application_id
    from stage_rows r
    join first_stages f on f.account = r.account and f.job_id = r.job_id
    where r.sort_order > f.sort_order`,
  },
  offers: {
    uses: [],
    body: (scope) => `select account, id,
      hiresync.try_bigint(data->'version') as version,
      hiresync.try_bigint(data->'application_id') as application_id,
      hiresync.try_bigint(data->'job_id') as job_id,
      data->>'status' as status,
      ${timestampUtc("data->'created_at'")} as created_at,
      ${timestampUtc("data->'resolved_at'")} as resolved_at
    from (${records('offers', scope)}) r`,
  },
  // An application's offer of the highest version (ties: highest id).
  latest_offers: {
    uses: ['offers'],
    body: () => `select distinct on (account, application_id) *
    from offers where application_id is not null
    order by account, application_id, version desc nulls last, id desc`,
  },
  job_posts: {
    uses: [],
    body: (scope) => `select account, id, hiresync.try_bigint(data->'job_board_id') as job_board_id
    from (${builtIn('job_posts', scope)}) p`,
  },
  // One row per funnel application, with what it reached.
  funnel: {
    uses: ['applications', 'interviewed', 'offers', 'job_posts'],
    body: () => `select a.account, a.id, a.candidate_id, a.job_id, a.job_post_id, a.source_id,
      a.referrer_id, a.status, a.created_at, p.job_board_id,
      i.application_id is not null as interviewed,
      exists (select 1 from offers o where o.account = a.account and o.application_id = a.id) as offered,
      a.status = 'hired' as hired
    from applications a
    left join interviewed i on i.account = a.account and i.application_id = a.id
    left join job_posts p on p.account = a.account and p.id = a.job_post_id
    where a.funnel`,
  },
};

/**
 * `with …` holding the CTEs `names` and those they read, in order, for
 * `scope` (and `moment`: the pipeline as of a date reads the history).
 * Materialized: each shared step is computed once per query, into narrow
 * rows, rather than inlined into every reader carrying the records' JSON
 * through sorts and joins (seconds at 100,000 applications).
 */
export function withCtes(
  names: readonly string[],
  scope: Scope,
  moment: Moment = 'current',
): string {
  const ordered: string[] = [];
  const visit = (name: string) => {
    if (ordered.includes(name)) return;
    const cte = CTES[name];
    if (cte === undefined) throw new Error(`no analytics CTE ${name}`);
    for (const used of cte.uses) visit(used);
    ordered.push(name);
  };
  for (const name of names) visit(name);
  return `with ${ordered
    .map((name) => `${name} as materialized (${CTES[name]?.body(scope, moment) ?? ''})`)
    .join(',\n')}`;
}
