import { type CreateTableBuilder, type Kysely, sql } from 'kysely';

// Migrations are frozen in time: they take Kysely<any> and never import app types.

const comments: Record<string, { table: string; columns: Record<string, string> }> = {
  job_boards: {
    table:
      'Job boards named by tracking links (the nested job_board object), one row per board id; newest values win.',
    columns: {
      id: 'Job board id (API).',
      company_name: 'Name of the company associated with the job board.',
      url_token: "Token used in the job board's URL.",
      raw: 'The job_board object as the API last sent it.',
      first_synced_at: 'When hiresync first stored this board.',
      synced_at: 'When hiresync last changed this row.',
    },
  },
  referrers: {
    table:
      'Referrers tracking links are credited to (the nested credited_to object with an id); newest values win.',
    columns: {
      id: 'Referrer id (API).',
      name: 'Full name of the referrer.',
      employee_id: "The referrer's external/employee identifier.",
      raw: 'The credited_to object as the API last sent it.',
      first_synced_at: 'When hiresync first stored this referrer.',
      synced_at: 'When hiresync last changed this row.',
    },
  },
  sources: {
    table: 'Sources of tracking links (the nested source object); newest values win.',
    columns: {
      id: 'Source id (API).',
      public_name: 'Public name of the source.',
      raw: 'The source object as the API last sent it.',
      first_synced_at: 'When hiresync first stored this source.',
      synced_at: 'When hiresync last changed this row.',
    },
  },
  tracking_links: {
    table:
      'Tracking links: a short job link token mapped back to a referrer and a source. Nested objects are normalised into job_boards, referrers and sources. Query the view tracking_links_flat for one denormalised row per link.',
    columns: {
      id: 'Tracking link id (API).',
      token: 'Token included in the job board link.',
      job_id: 'Job associated with the link (see jobs.id).',
      job_post_id: 'Job post associated with the link (see job_posts.id).',
      job_board_id: 'Job board of the link (job_boards.id).',
      related_post_id: 'Id of the related post or email for the token.',
      related_post_type:
        'Type of the related post (a class-like name, e.g. a social media post type).',
      credited_to_id:
        'Referrer the token is credited to (referrers.id); null when the API sent a referrer without id.',
      credited_to_name:
        'Name of a referrer sent without id (with an id, the name is in referrers).',
      credited_to_employee_id:
        'Employee id of a referrer sent without id (with an id, it is in referrers).',
      source_id: 'Source of the token (sources.id).',
      created_at: 'Creation time, at the precision the API sent.',
      updated_at: 'Last update time, at the precision the API sent.',
      raw: 'The record exactly as the API last sent it (unknown fields included).',
      deleted_at:
        'Set when a completed full sync no longer saw the link (soft delete); cleared when seen again.',
      first_synced_at: 'When hiresync first stored this link.',
      synced_at: 'When hiresync last wrote this row.',
      last_seen_run_id: 'The sync run (sync_runs.id) that last saw this link.',
    },
  },
  jobs: {
    table: 'Jobs, one row per job id, the record as the API sent it.',
    columns: {
      id: 'Job id (API).',
      data: 'The record exactly as the API last sent it.',
      deleted_at:
        'Set when a completed full sync no longer saw the job (soft delete); cleared when seen again.',
      first_synced_at: 'When hiresync first stored this job.',
      synced_at: 'When hiresync last wrote this row.',
      last_seen_run_id: 'The sync run (sync_runs.id) that last saw this job.',
    },
  },
  job_posts: {
    table: 'Job posts, one row per job post id, the record as the API sent it.',
    columns: {
      id: 'Job post id (API).',
      data: 'The record exactly as the API last sent it.',
      deleted_at:
        'Set when a completed full sync no longer saw the job post (soft delete); cleared when seen again.',
      first_synced_at: 'When hiresync first stored this job post.',
      synced_at: 'When hiresync last wrote this row.',
      last_seen_run_id: 'The sync run (sync_runs.id) that last saw this job post.',
    },
  },
  sync_runs: {
    table: 'One row per sync run of one resource. A run interrupted and resumed keeps its id.',
    columns: {
      id: 'Run id.',
      resource: 'jobs, job_posts or tracking_links.',
      mode: 'full (every page, then the deletion sweep) or incremental (new records only).',
      filter: 'The list filter of the run (e.g. status=closed); a filtered run marks no deletions.',
      started_at: 'When the run started.',
      finished_at: 'When the run ended (null while running).',
      pages: 'Pages written.',
      records: 'Records written.',
      rejected: 'Records rejected into rejected_records.',
      deleted: 'Rows soft-deleted by the sweep at the end of a full run.',
      max_id: 'Highest record id the run saw (where the next incremental run stops).',
      outcome: 'running, succeeded or failed.',
      error: 'Why the run failed.',
    },
  },
  rejected_records: {
    table:
      'Records the API sent that could not be stored as rows (no id, wrong types). Never silently dropped.',
    columns: {
      id: 'Row id.',
      resource: 'The resource the record came from.',
      run_id: 'The sync run that met it (sync_runs.id).',
      page: 'Page number within the run.',
      raw: 'The record exactly as the API sent it.',
      record_key:
        'Page, position in the page and MD5 of the raw text: a page read again does not store its records twice, and identical bad records are all kept.',
      reason: 'What is wrong with it.',
      rejected_at: 'When it was rejected.',
    },
  },
};

function bookkeeping<T extends string, C extends string>(builder: CreateTableBuilder<T, C>) {
  return builder
    .addColumn('first_synced_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('synced_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`));
}

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sync_runs')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('full', 'incremental')`))
    .addColumn('filter', 'text')
    .addColumn('started_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .addColumn('pages', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('records', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('rejected', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('deleted', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('max_id', 'bigint')
    .addColumn('outcome', 'text', (c) =>
      c.notNull().defaultTo('running').check(sql`outcome in ('running', 'succeeded', 'failed')`),
    )
    .addColumn('error', 'text')
    .execute();
  await db.schema
    .createIndex('sync_runs_resource_started_idx')
    .on('sync_runs')
    .columns(['resource', 'id desc'])
    .execute();

  await bookkeeping(
    db.schema
      .createTable('job_boards')
      .addColumn('id', 'bigint', (c) => c.primaryKey())
      .addColumn('company_name', 'text')
      .addColumn('url_token', 'text')
      .addColumn('raw', 'jsonb'),
  ).execute();
  await bookkeeping(
    db.schema
      .createTable('referrers')
      .addColumn('id', 'bigint', (c) => c.primaryKey())
      .addColumn('name', 'text')
      .addColumn('employee_id', 'text')
      .addColumn('raw', 'jsonb'),
  ).execute();
  await bookkeeping(
    db.schema
      .createTable('sources')
      .addColumn('id', 'bigint', (c) => c.primaryKey())
      .addColumn('public_name', 'text')
      .addColumn('raw', 'jsonb'),
  ).execute();

  await bookkeeping(
    db.schema
      .createTable('tracking_links')
      .addColumn('id', 'bigint', (c) => c.primaryKey())
      .addColumn('token', 'text')
      .addColumn('job_id', 'bigint')
      .addColumn('job_post_id', 'bigint')
      .addColumn('job_board_id', 'bigint', (c) => c.references('job_boards.id'))
      .addColumn('related_post_id', 'bigint')
      .addColumn('related_post_type', 'text')
      .addColumn('credited_to_id', 'bigint', (c) => c.references('referrers.id'))
      .addColumn('credited_to_name', 'text')
      .addColumn('credited_to_employee_id', 'text')
      .addColumn('source_id', 'bigint', (c) => c.references('sources.id'))
      .addColumn('created_at', 'timestamptz')
      .addColumn('updated_at', 'timestamptz')
      .addColumn('raw', 'jsonb', (c) => c.notNull())
      .addColumn('deleted_at', 'timestamptz'),
  )
    .addColumn('last_seen_run_id', 'bigint')
    // Room on each page for HOT updates when a full run re-writes unchanged rows.
    .modifyEnd(sql`with (fillfactor = 80)`)
    .execute();
  for (const column of [
    'job_id',
    'job_post_id',
    'job_board_id',
    'credited_to_id',
    'source_id',
    'token',
  ]) {
    await db.schema
      .createIndex(`tracking_links_${column}_idx`)
      .on('tracking_links')
      .column(column)
      .execute();
  }

  for (const table of ['jobs', 'job_posts']) {
    await bookkeeping(
      db.schema
        .createTable(table)
        .addColumn('id', 'bigint', (c) => c.primaryKey())
        .addColumn('data', 'jsonb', (c) => c.notNull())
        .addColumn('deleted_at', 'timestamptz'),
    )
      .addColumn('last_seen_run_id', 'bigint')
      .modifyEnd(sql`with (fillfactor = 80)`)
      .execute();
  }

  await db.schema
    .createTable('rejected_records')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('run_id', 'bigint', (c) => c.references('sync_runs.id'))
    .addColumn('page', 'integer')
    .addColumn('raw', 'jsonb', (c) => c.notNull())
    .addColumn('record_key', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('rejected_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('rejected_records_once_per_run', ['resource', 'run_id', 'record_key'])
    .execute();

  await sql`
    create view tracking_links_flat as
    select
      tl.id,
      tl.token,
      tl.job_id,
      tl.job_post_id,
      tl.job_board_id,
      jb.company_name as job_board_company_name,
      jb.url_token as job_board_url_token,
      tl.related_post_id,
      tl.related_post_type,
      tl.credited_to_id,
      coalesce(r.name, tl.credited_to_name) as credited_to_name,
      coalesce(r.employee_id, tl.credited_to_employee_id) as credited_to_employee_id,
      tl.source_id,
      s.public_name as source_public_name,
      tl.created_at,
      tl.updated_at,
      tl.deleted_at,
      tl.synced_at,
      tl.last_seen_run_id
    from tracking_links tl
    left join job_boards jb on jb.id = tl.job_board_id
    left join referrers r on r.id = tl.credited_to_id
    left join sources s on s.id = tl.source_id
  `.execute(db);

  for (const [table, { table: text, columns }] of Object.entries(comments)) {
    await sql`comment on table ${sql.table(table)} is ${sql.lit(text)}`.execute(db);
    for (const [column, note] of Object.entries(columns)) {
      await sql`comment on column ${sql.ref(`${table}.${column}`)} is ${sql.lit(note)}`.execute(db);
    }
  }
  await sql`comment on view tracking_links_flat is ${sql.lit(
    "Analysts' entry point: one row per tracking link with its job board, referrer and source names joined in. Rows with deleted_at set are links the API no longer lists.",
  )}`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop view if exists tracking_links_flat`.execute(db);
  for (const table of [
    'rejected_records',
    'tracking_links',
    'job_boards',
    'referrers',
    'sources',
    'jobs',
    'job_posts',
    'sync_runs',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
