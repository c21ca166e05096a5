import {
  FIRST_TYPED_VIEWS,
  ident,
  literal,
  sharedTable,
  typedViewPlaceholderText,
} from './account-views.js';

/**
 * The version of the derived views {@link derivedViewsText} makes, an entry
 * of a schema's recorded layout (see layoutOf): a schema recorded without it
 * gets {@link derivedViewsUpgradeText} at its next `migrate`. Version 2:
 * tracking_links_flat's columns commented and `changed_at` appended, the
 * reference lists' typed views.
 */
export const DERIVED_VIEWS_ENTRY = 'derived views(2)';

/** The analysts' entry point's comment. */
export const TRACKING_LINKS_FLAT_COMMENT =
  "Analysts' entry point: one row per tracking link with its job board, referrer and source names joined in. Rows with deleted_at set are links the API no longer lists.";

/** The comment of each column of tracking_links_flat, in its order. */
const TRACKING_LINKS_FLAT_COLUMNS: ReadonlyArray<[name: string, comment: string]> = [
  ['id', 'Tracking link id (API).'],
  ['token', 'Token included in the job board link (gh_src=<token>).'],
  ['job_id', 'Job the link targets (jobs.id); null when it targets none.'],
  ['job_post_id', 'Job post the link targets (job_posts.id); null when it targets none.'],
  ['job_board_id', 'Job board of the link (job_boards.id).'],
  ['job_board_company_name', 'job_boards.company_name of job_board_id.'],
  ['job_board_url_token', 'job_boards.url_token of job_board_id.'],
  ['related_post_id', 'Id of the related post or email for the token.'],
  [
    'related_post_type',
    'Type of the related post (a class-like name, e.g. a social media post type).',
  ],
  [
    'credited_to_id',
    'Referrer the token is credited to (referrers.id); null when the API sent a referrer without id.',
  ],
  [
    'credited_to_name',
    'Name of the referrer the link is credited to: referrers.name of credited_to_id, else the name sent with a referrer without id.',
  ],
  [
    'credited_to_employee_id',
    'Employee id of that referrer: referrers.employee_id of credited_to_id, else the one sent with a referrer without id.',
  ],
  ['source_id', 'Source of the token (sources.id).'],
  ['source_public_name', 'sources.public_name of source_id.'],
  ['created_at', 'Creation time, at the precision the API sent.'],
  ['updated_at', 'Last update time, at the precision the API sent.'],
  [
    'deleted_at',
    'Set when a completed full sync no longer saw the link (soft delete); cleared when seen again.',
  ],
  ['synced_at', 'When hiresync last wrote this row.'],
  ['last_seen_run_id', 'The sync run (sync_runs.id) that last saw this link.'],
  [
    'changed_at',
    'When the link as stored last changed (valid_from of its open version in tracking_links_history): rows changed since a time T are changed_at > T.',
  ],
];

/** The select of `tracking_links_flat` over relations `tl`, `jb`, `r` and `s`, joined on id (and account, when given). */
export function trackingLinksFlatSelect(
  from: { links: string; boards: string; referrers: string; sources: string },
  account?: { column: string },
): string {
  const join = (alias: string, column: string) =>
    account === undefined
      ? `${alias}.id = tl.${column}`
      : `${alias}.account = tl.account and ${alias}.id = tl.${column}`;
  return `select ${account === undefined ? '' : 'tl.account, '}tl.id, tl.token, tl.job_id, tl.job_post_id, tl.job_board_id,
      jb.company_name as job_board_company_name, jb.url_token as job_board_url_token,
      tl.related_post_id, tl.related_post_type, tl.credited_to_id,
      coalesce(r.name, tl.credited_to_name) as credited_to_name,
      coalesce(r.employee_id, tl.credited_to_employee_id) as credited_to_employee_id,
      tl.source_id, s.public_name as source_public_name,
      tl.created_at, tl.updated_at, tl.deleted_at, tl.synced_at, tl.last_seen_run_id, tl.changed_at
    from ${from.links} tl
    left join ${from.boards} jb on ${join('jb', 'job_board_id')}
    left join ${from.referrers} r on ${join('r', 'credited_to_id')}
    left join ${from.sources} s on ${join('s', 'source_id')}`;
}

/** A column of a reference list's typed view: its name, what it selects, its comment. */
type ReferenceColumn = readonly [name: string, select: string, comment: string];

const TIMES = (list: string): ReferenceColumn[] => [
  [
    'created_at',
    `hiresync.try_timestamptz_utc(raw -> 'created_at')`,
    `Key "created_at" of the record as sent (raw -> 'created_at'), as timestamptz (without a UTC offset: read as UTC); null when the copy held has none (a tracking link's nested copy) or it does not parse.`,
  ],
  [
    'updated_at',
    `hiresync.try_timestamptz_utc(raw -> 'updated_at')`,
    `Key "updated_at" of the record as sent (raw -> 'updated_at'), as timestamptz, read as created_at is.`,
  ],
  [
    'deleted_at',
    'deleted_at',
    `Set when a full run of ${list} no longer saw the id (soft delete).`,
  ],
  [
    'changed_at',
    'changed_at',
    `When the row as stored last changed (valid_from of its open version in ${list}_history): rows changed since a time T are changed_at > T.`,
  ],
  ['synced_at', 'synced_at', 'When hiresync last changed this row.'],
];

/**
 * The typed views of the reference lists (docs/tables.md, "Typed views of
 * the reference lists"): fixed columns over `raw` beside the table's own, so
 * no question about a source's strategy, a referrer's user or a list's times
 * needs jsonb. Their records have a known shape, unlike a list's whose keys
 * follow the data, and `raw` holds whichever copy came last (the list's or a
 * tracking link's nested one), so the columns are declared, not inferred.
 */
export const REFERENCE_FLAT_VIEWS: ReadonlyArray<{
  view: string;
  table: string;
  comment: string;
  columns: readonly ReferenceColumn[];
}> = [
  {
    view: 'sources_flat',
    table: 'sources',
    comment:
      'sources with typed columns: the sourcing strategy (type_name, what the vendor says to aggregate candidate volume by channel with), the times, the row state. One row per source id.',
    columns: [
      ['id', 'id', 'Source id (API).'],
      [
        'public_name',
        'public_name',
        'Name of the source (name in /v3/sources, public_name in a nested copy).',
      ],
      [
        'type_id',
        `hiresync.try_bigint(raw -> 'type' -> 'id')`,
        `Id of the source's type, its sourcing strategy (raw -> 'type' -> 'id'); null when the copy held carries no type.`,
      ],
      [
        'type_name',
        `raw -> 'type' ->> 'name'`,
        `The sourcing strategy (raw -> 'type' ->> 'name'): Agencies, Referral, Third-party boards, Prospecting, …; it has no machine key, so group by name. Null when the copy held carries no type (a tracking link's nested source).`,
      ],
      ...TIMES('sources'),
    ],
  },
  {
    view: 'referrers_flat',
    table: 'referrers',
    comment:
      'referrers with typed columns: the employee user a referrer is, the times, the row state. One row per referrer id.',
    columns: [
      [
        'id',
        'id',
        'Referrer id (API): what applications.referrer_id and tracking links credited_to_id point at.',
      ],
      ['name', 'name', 'Full name of the referrer (a person: see the field policy).'],
      [
        'user_id',
        `hiresync.try_bigint(raw -> 'user_id')`,
        `Key "user_id" of the record as sent (raw -> 'user_id'), as bigint: the user the referrer is, when an employee; often null.`,
      ],
      ['employee_id', 'employee_id', "The referrer's external/employee identifier."],
      ...TIMES('referrers'),
    ],
  },
  {
    view: 'job_boards_flat',
    table: 'job_boards',
    comment:
      'job_boards with typed columns: the times and the row state beside the names. One row per job board id.',
    columns: [
      [
        'id',
        'id',
        'Job board id (API): what job_posts.job_board_id and tracking links job_board_id point at.',
      ],
      ['company_name', 'company_name', 'Name of the company associated with the job board.'],
      ['url_token', 'url_token', "Token used in the job board's URL."],
      ...TIMES('job_boards'),
    ],
  },
];

/**
 * The select of reference view `view` (of {@link REFERENCE_FLAT_VIEWS}) over
 * the relation `from`; with `account`, the account column first (the union
 * over the shared table).
 */
export function referenceFlatSelect(view: string, from: string, account = false): string {
  const spec = REFERENCE_FLAT_VIEWS.find((v) => v.view === view);
  const list = (spec?.columns ?? []).map(([name, select]) =>
    select === name ? ident(name) : `${select} as ${ident(name)}`,
  );
  return `select ${[...(account ? ['account'] : []), ...list].join(', ')} from ${from}`;
}

/** The derived views all_accounts unions, by name: the select of each over the shared tables, `account` first. */
export function derivedUnionSelect(relation: string): string | undefined {
  const shared = (table: string) => `hiresync.${sharedTable(table)}`;
  if (relation === 'tracking_links_flat') {
    return trackingLinksFlatSelect(
      {
        links: shared('tracking_links'),
        boards: shared('job_boards'),
        referrers: shared('referrers'),
        sources: shared('sources'),
      },
      { column: 'account' },
    );
  }
  const reference = REFERENCE_FLAT_VIEWS.find((v) => v.view === relation);
  return reference && referenceFlatSelect(relation, shared(reference.table), true);
}

/**
 * The statements that bring `schema`'s derived views to
 * {@link DERIVED_VIEWS_ENTRY}: `tracking_links_flat` (created, or replaced
 * in place with `changed_at` appended: objects built on it survive) and the
 * reference lists' typed views, every column commented.
 */
export function derivedViewsUpgradeText(schema: string): string {
  const s = ident(schema);
  const statements = [
    `create or replace view ${s}.tracking_links_flat as ${trackingLinksFlatSelect({
      links: `${s}.tracking_links`,
      boards: `${s}.job_boards`,
      referrers: `${s}.referrers`,
      sources: `${s}.sources`,
    })}`,
    `comment on view ${s}.tracking_links_flat is ${literal(TRACKING_LINKS_FLAT_COMMENT)}`,
    ...TRACKING_LINKS_FLAT_COLUMNS.map(
      ([name, comment]) =>
        `comment on column ${s}.tracking_links_flat.${ident(name)} is ${literal(comment)}`,
    ),
  ];
  for (const { view, table, comment, columns } of REFERENCE_FLAT_VIEWS) {
    const name = `${s}.${ident(view)}`;
    statements.push(
      `create or replace view ${name} as ${referenceFlatSelect(view, `${s}.${ident(table)}`)}`,
      `comment on view ${name} is ${literal(comment)}`,
      ...columns.map(
        ([column, , note]) => `comment on column ${name}.${ident(column)} is ${literal(note)}`,
      ),
    );
  }
  return `${statements.join(';\n')};`;
}

/**
 * The statements that make a new account's derived views in `schema` (whose
 * table views accountViewsText made): those of {@link derivedViewsUpgradeText},
 * and the typed views `jobs_flat` and `job_posts_flat` (id and the row's
 * state until a refresh fills them); registerFirstTypedViews registers them.
 */
export function derivedViewsText(schema: string): string {
  const typed = FIRST_TYPED_VIEWS.map(([view, table]) =>
    typedViewPlaceholderText(schema, view, table),
  );
  return `${derivedViewsUpgradeText(schema)}\n${typed.join(';\n')};`;
}
