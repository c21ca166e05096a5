import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import type { Database } from '../../src/warehouse/tables.js';

/**
 * A role of the test's own (roles are the server's, not the database's):
 * dropped with what it was granted in `db` when `drop` runs (before the
 * database goes).
 */
export async function testRole(
  db: Kysely<Database>,
  prefix = 'analyst',
): Promise<{ role: string; drop: () => Promise<void> }> {
  const role = `hiresync_test_${prefix}_${randomBytes(4).toString('hex')}`;
  await sql.raw(`create role ${role} nologin`).execute(db);
  return {
    role,
    drop: async () => {
      await sql.raw(`drop owned by ${role}`).execute(db);
      await sql.raw(`drop role ${role}`).execute(db);
    },
  };
}

/** What `role` may do with each relation: `read N` (its count), or the error Postgres gives it. */
export async function readAs(url: string, role: string, relations: readonly string[]) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`set role ${role}`);
    const out: Record<string, string> = {};
    for (const relation of relations) {
      try {
        const { rows } = await client.query<{ n: string }>(
          `select count(*)::text as n from ${relation}`,
        );
        out[relation] = `read ${rows[0]?.n}`;
      } catch (error) {
        out[relation] = (error as Error).message.replace(/ for (table|view|schema) .*/, '');
      }
    }
    return out;
  } finally {
    await client.end();
  }
}

/** The relations of `schema` a reader may be granted (tables, views), hiresync's migration records left out. */
export async function relationsOf(
  db: Kysely<Database>,
  schema: string,
): Promise<Array<{ relation: string; columns: string[] }>> {
  const { rows } = await sql<{ relation: string; columns: string[] }>`
    select c.relname as relation, array_agg(a.attname::text order by a.attnum) as columns
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    where n.nspname = ${schema} and c.relkind in ('r', 'v', 'm', 'p', 'f')
      and c.relname not like 'kysely\\_%'
    group by c.relname order by c.relname`.execute(db);
  return rows;
}

/** What a leaky function saw of one relation, and what the reader may read of it. */
export interface LeakAttempt {
  relation: string;
  /** Rows (`columns` of them, as text) the function was called with, whichever way the query was run. */
  seen: Set<string>;
  /** The rows the relation shows the reader (the same text): anything seen beyond these is another account's. */
  readable: Set<string>;
  /** The text of the EXPLAIN ANALYZE of the query. */
  explain: string;
}

/**
 * A curious analyst: a connection as `role` (set role on a connection of the
 * server's user, so the role's own privileges decide) with a function of the
 * smallest cost, made in pg_temp, that records every row it is called with.
 */
export interface LeakyReader {
  /**
   * Reads `schema.relation` with the function in the WHERE: a plain query,
   * then with index and bitmap scans off, under EXPLAIN ANALYZE, in a
   * prepared statement (generic plan) and through a cursor.
   */
  attempt(schema: string, relation: string, columns: readonly string[]): Promise<LeakAttempt>;
  close(): Promise<void>;
}

export async function leakyReader(url: string, role: string): Promise<LeakyReader> {
  const client = new pg.Client({ connectionString: url });
  let closed = false;
  await client.connect();
  await client.query(`set role ${role}`);
  await client.query('create temp table seen (r text)');
  // Its argument a row of plain columns, which costs nothing to build: the
  // whole condition is cheaper than any filter of the view's own.
  await client.query(`create function pg_temp.leak(r anyelement) returns boolean language plpgsql
    cost 0.0000001 as $$ begin insert into pg_temp.seen values (r::text); return true; end $$`);
  return {
    async attempt(schema, relation, columns) {
      await client.query('truncate pg_temp.seen');
      await client.query('reset enable_indexscan; reset enable_bitmapscan; reset plan_cache_mode');
      const row = `row(${columns.map((c) => `t.${pg.escapeIdentifier(c)}`).join(', ')})`;
      const from = `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(relation)} t`;
      const query = `select * from ${from} where pg_temp.leak(${row})`;
      const readable = new Set(
        (await client.query<{ r: string }>(`select ${row}::text as r from ${from}`)).rows.map(
          (r) => r.r,
        ),
      );
      await client.query(query);
      await client.query('set enable_indexscan = off; set enable_bitmapscan = off');
      await client.query(query);
      const explain = (
        await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, verbose) ${query}`)
      ).rows
        .map((r) => r['QUERY PLAN'])
        .join('\n');
      await client.query('set plan_cache_mode = force_generic_plan');
      await client.query(`prepare leaky as ${query}`);
      await client.query('execute leaky');
      await client.query('deallocate leaky');
      await client.query('begin');
      await client.query(`declare leaky_cursor cursor for ${query}`);
      await client.query('fetch all from leaky_cursor');
      await client.query('commit');
      const seen = new Set(
        (await client.query<{ r: string }>('select r from pg_temp.seen')).rows.map((r) => r.r),
      );
      return { relation, seen, readable, explain };
    },
    close: async () => {
      if (!closed) await client.end();
      closed = true;
    },
  };
}
