import { type Kysely, sql } from 'kysely';

// Whether a connect link may register its account over rows of an earlier
// registration of the name (hiresync accounts invite NAME --reuse-data).
// Frozen in time: takes Kysely<any>, never imports app types, names its
// tables with their schema.
//
// An account removed without --drop-data leaves its rows in the shared
// tables; a name registered again shows them. The callback of a link that
// registers its account refuses while such rows are stored, unless the
// operator said, when making the link, that the same customer is back.

const COMMENT =
  'True when the link was made with hiresync accounts invite --reuse-data: the account it registers may take over the rows an earlier registration of its name left stored (removed without --drop-data), the same customer being back. False: the callback refuses to register the account while such rows are stored, changing nothing. Read only for a link that registers its account.';

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table hiresync.connect_links add column reuse_data boolean not null default false`.execute(
    db,
  );
  await sql`comment on column hiresync.connect_links.reuse_data is ${sql.lit(COMMENT)}`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table hiresync.connect_links drop column if exists reuse_data`.execute(db);
}
