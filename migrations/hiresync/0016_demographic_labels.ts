import { type Kysely, sql } from 'kysely';

// The operator's labels of the standard demographic questions and answer
// options, whose `name` the API serves as null (docs/analytics.md,
// "diversity_funnel"). Frozen in time: takes Kysely<any>, never imports app
// types, names its table with its schema.
//
// A shared table as every account's table (0009): keyed by account, so each
// account schema gets a view `demographic_labels` of its own rows (made by
// migrate, as for every shared table; rows written through it are the
// account's, its check option refuses any other). Small: not partitioned.

const COMMENT =
  "Labels the operator gives the standard demographic questions and answer options, whose name the API serves as null: the diversity_funnel view shows a question's or option's name, else its label here, else 'question <id>' / 'option <id>'. Filled by hand, one row per (kind, id); hiresync never writes it.";

const COLUMNS: Record<string, string> = {
  account: 'The account the row belongs to.',
  kind: "'question' (demographic_questions.id) or 'option' (demographic_answer_options.id).",
  id: 'The id of the question or answer option the label names.',
  label: 'The label analysts see for it.',
};

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table hiresync.data_demographic_labels (
    account text not null,
    kind text not null check (kind in ('question', 'option')),
    id bigint not null,
    label text not null,
    primary key (account, kind, id)
  )`.execute(db);
  await sql`comment on table hiresync.data_demographic_labels is ${sql.lit(COMMENT)}`.execute(db);
  for (const [column, comment] of Object.entries(COLUMNS)) {
    await sql`comment on column ${sql.id('hiresync', 'data_demographic_labels', column)} is ${sql.lit(comment)}`.execute(
      db,
    );
  }
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists hiresync.data_demographic_labels cascade`.execute(db);
}
