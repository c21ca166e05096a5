import { type AnalyticsView, columns } from './analytics-view.js';
import { withCtes } from './funnel.js';
import { builtIn, rate, type Scope } from './scope.js';

const APPLICATIONS = [
  'applications',
  'bigint',
  'Funnel applications (not deleted, not prospects).',
] as const;
const INTERVIEWED = [
  'interviewed',
  'bigint',
  "Of them, applications with a stage row past their job's first stage.",
] as const;
const OFFERS = [
  'offers',
  'bigint',
  'Of them, applications with at least one offer (any version or status).',
] as const;
const HIRES = ['hires', 'bigint', 'Of them, applications whose status is hired.'] as const;
const HIRE_RATE = [
  'hire_rate',
  'numeric',
  'hires / applications; null when there are none.',
] as const;

/** The counts every breakdown shows, over the funnel rows `f`. */
const COUNTS = `count(*) as applications,
      count(*) filter (where f.interviewed) as interviewed,
      count(*) filter (where f.offered) as offers,
      count(*) filter (where f.hired) as hires,
      ${rate('count(*) filter (where f.interviewed)', 'count(*)')} as interview_rate,
      ${rate('count(*) filter (where f.offered)', 'count(*)')} as offer_rate,
      ${rate('count(*) filter (where f.hired)', 'count(*)')} as hire_rate`;

export const sourceOfHire: AnalyticsView = {
  name: 'source_of_hire',
  comment:
    "One row per source of the account's funnel applications (null: no source): applications, interviews reached, offers and hires, and the rates between them.",
  columns: columns(
    ['source_id', 'bigint', "The applications' source_id (sources.id); null for those with none."],
    ['source_name', 'text', 'sources.public_name; null when the source is not in sources.'],
    [
      'source_type',
      'text',
      "The source's type (its sourcing strategy: sources.raw->'type'->>'name').",
    ],
    APPLICATIONS,
    OFFERS,
    HIRES,
    INTERVIEWED,
    ['interview_rate', 'numeric', 'interviewed / applications.'],
    ['offer_rate', 'numeric', 'offers / applications.'],
    HIRE_RATE,
  ),
  body: (scope: Scope) => `${withCtes(['funnel'], scope)}
    select f.account, f.source_id, s.public_name as source_name, s.raw->'type'->>'name' as source_type,
      ${COUNTS}
    from funnel f
    left join (${builtIn('sources', scope)}) s on s.account = f.account and s.id = f.source_id
    group by f.account, f.source_id, s.public_name, s.raw->'type'->>'name'`,
};

export const sourceOfHireByReferrer: AnalyticsView = {
  name: 'source_of_hire_by_referrer',
  comment:
    "One row per referrer of the account's funnel applications (null: no referrer): applications, interviews reached, offers, hires.",
  columns: columns(
    [
      'referrer_id',
      'bigint',
      "The applications' referrer_id (referrers.id, not a user id); null for none.",
    ],
    ['referrer_name', 'text', 'referrers.name; null when the referrer is not in referrers.'],
    APPLICATIONS,
    INTERVIEWED,
    OFFERS,
    HIRES,
    HIRE_RATE,
  ),
  body: (scope) => `${withCtes(['funnel'], scope)}
    select f.account, f.referrer_id, r.name as referrer_name, ${COUNTS}
    from funnel f
    left join (${builtIn('referrers', scope)}) r on r.account = f.account and r.id = f.referrer_id
    group by f.account, f.referrer_id, r.name`,
};

export const sourceOfHireByJobBoard: AnalyticsView = {
  name: 'source_of_hire_by_job_board',
  comment:
    "One row per job board of the account's funnel applications, reached through the job post they applied through (null: no post, or a post without a board): applications, interviews reached, offers, hires.",
  columns: columns(
    ['job_board_id', 'bigint', "The job_board_id of the application's job post; null when none."],
    [
      'job_board_name',
      'text',
      'job_boards.company_name; null when the board is not in job_boards.',
    ],
    APPLICATIONS,
    INTERVIEWED,
    OFFERS,
    HIRES,
    HIRE_RATE,
  ),
  body: (scope) => `${withCtes(['funnel'], scope)}
    select f.account, f.job_board_id, b.company_name as job_board_name, ${COUNTS}
    from funnel f
    left join (${builtIn('job_boards', scope)}) b on b.account = f.account and b.id = f.job_board_id
    group by f.account, f.job_board_id, b.company_name`,
};

export const sourceOfHireByJob: AnalyticsView = {
  name: 'source_of_hire_by_job',
  comment:
    "One row per job of the account's funnel applications (null: no job): applications, interviews reached, offers, hires.",
  columns: columns(
    ['job_id', 'bigint', "The applications' job_id; null for those with none."],
    ['job_name', 'text', "The job's name (jobs.data->>'name'); null when the job is not in jobs."],
    APPLICATIONS,
    INTERVIEWED,
    OFFERS,
    HIRES,
    HIRE_RATE,
  ),
  body: (scope) => `${withCtes(['funnel'], scope)}
    select f.account, f.job_id, j.data->>'name' as job_name, ${COUNTS}
    from funnel f
    left join (${builtIn('jobs', scope)}) j on j.account = f.account and j.id = f.job_id
    group by f.account, f.job_id, j.data->>'name'`,
};

export const sourceOfHireByTrackingLink: AnalyticsView = {
  name: 'source_of_hire_by_tracking_link',
  comment:
    "One row per tracking link matching at least one funnel application (same source; credited referrer, if any, the application's; its job post, job or board the application's, or none named): an application matching one link is credited to it, one matching several is counted as ambiguous for each and credited to none.",
  columns: columns(
    ['tracking_link_id', 'bigint', 'tracking_links.id.'],
    ['token', 'text', "The link's token."],
    ['source_id', 'bigint', "The link's source_id (equal to its applications')."],
    [
      'applications',
      'bigint',
      'Funnel applications credited to this link: matching it and no other.',
    ],
    [
      'interviewed',
      'bigint',
      'Of the credited applications, those with a stage row past the first stage.',
    ],
    ['offers', 'bigint', 'Of the credited applications, those with an offer.'],
    ['hires', 'bigint', 'Of the credited applications, those hired.'],
    [
      'ambiguous_applications',
      'bigint',
      'Funnel applications matching this link and at least one other: credited to none.',
    ],
  ),
  body: (scope) => `${withCtes(['funnel'], scope)},
    matches as (
      select f.*, l.id as link_id, l.token, l.source_id as link_source_id,
        count(*) over (partition by f.account, f.id) as links
      from funnel f
      join (${builtIn('tracking_links', scope)}) l on l.account = f.account and l.source_id = f.source_id
      where (l.credited_to_id is null or l.credited_to_id = f.referrer_id)
        and (l.job_post_id = f.job_post_id or l.job_id = f.job_id or l.job_board_id = f.job_board_id
          or (l.job_post_id is null and l.job_id is null and l.job_board_id is null))
    )
    select account, link_id as tracking_link_id, token, link_source_id as source_id,
      count(*) filter (where links = 1) as applications,
      count(*) filter (where links = 1 and interviewed) as interviewed,
      count(*) filter (where links = 1 and offered) as offers,
      count(*) filter (where links = 1 and hired) as hires,
      count(*) filter (where links > 1) as ambiguous_applications
    from matches
    group by account, link_id, token, link_source_id`,
};
