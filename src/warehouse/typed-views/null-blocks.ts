import { sql, type Transaction } from 'kysely';
import { coerceError } from '../../errors.js';
import type { PlacedView } from '../layout/view-placement.js';
import type { Database } from '../tables.js';
import { holdsType } from './column-types.js';

/**
 * Records that `schema.view` shows null where the records hold values
 * (objects of others keep columns from widening or keep columns that show no
 * key; or its refresh could not finish): message says which, and what
 * resolves it. Without `block`, that it is blocked no more. Kept in hiresync.typed_view_blocks, which `status` and
 * the metric hiresync_typed_view_blocked read.
 */
export async function noteTypedViewBlock(
  trx: Transaction<Database>,
  schema: string,
  view: string,
  block?: { message: string; blocking: readonly string[] },
): Promise<void> {
  const { rows } = await sql<{ present: boolean }>`
    select to_regclass('hiresync.typed_view_blocks') is not null as present`.execute(trx);
  if (!rows[0]?.present) return;
  if (block) {
    await sql`insert into hiresync.typed_view_blocks (schema, view, message, blocking, blocked_since)
      values (${schema}, ${view}, ${block.message}, ${[...block.blocking]}::text[], now())
      on conflict (schema, view) do update set message = excluded.message,
        blocking = excluded.blocking, resolved_at = null,
        blocked_since = coalesce(hiresync.typed_view_blocks.blocked_since, excluded.blocked_since)`.execute(
      trx,
    );
  } else {
    await sql`update hiresync.typed_view_blocks
      set message = null, blocked_since = null, resolved_at = now()
      where schema = ${schema} and view = ${view} and message is not null`.execute(trx);
  }
}

/** What a typed view (or union) kept in place for objects of others cannot show. */
export interface KeptColumns {
  /** Columns kept at a type that cannot show every value of their key, as `name: old → new`. */
  conflicts: readonly string[];
  /** Columns that show no key any more (named under an earlier rule, or their key is gone): null in every row. */
  orphans: readonly string[];
}

/**
 * Why `view` shows null where the records hold values, and what resolves it:
 * drop the objects in the way (`dependents`), rebuild with `command`, create
 * them again.
 */
export function blockMessage(
  view: string,
  kept: KeptColumns,
  dependents: readonly string[],
  command: string,
): string {
  const them = dependents.length === 1 ? 'it' : 'them';
  const depend = `because ${dependents.join(', ')} depend${dependents.length === 1 ? 's' : ''} on it`;
  const parts: string[] = [];
  if (kept.conflicts.length > 0) {
    parts.push(
      `keeps column${kept.conflicts.length > 1 ? 's' : ''} ${kept.conflicts.join(', ')} at the old type ${depend}: values that do not fit the old type read null there (they are kept as sent in the records' data)`,
    );
  }
  if (kept.orphans.length > 0) {
    parts.push(
      `keeps column${kept.orphans.length > 1 ? 's' : ''} ${kept.orphans.join(', ')}, which ${kept.orphans.length > 1 ? 'show' : 'shows'} no key any more (named under an earlier rule, or no account has its key), ${depend}: ${kept.orphans.length > 1 ? 'they read' : 'it reads'} null in every row`,
    );
  }
  return `typed view ${view} ${parts.join('; and ')}. To resolve: drop ${dependents.join(', ')}, run '${command}', then create ${them} again (on the columns the view names now)`;
}

/** The lock_timeout of a refresh's table locks (an analyst's query holding one). */
export const REFRESH_LOCK_TIMEOUT = '10s';

/**
 * Why the refresh of `view` failed, what it leaves absent, and what resolves
 * it: end what was in the way (or fix the cause), then run `command`.
 */
export function refreshFailureMessage(
  view: string,
  error: unknown,
  command: string,
  table: string,
): string {
  const code = (error as { code?: string }).code;
  const cause =
    code === LOCK_NOT_AVAILABLE
      ? `a lock it needs was held for more than ${REFRESH_LOCK_TIMEOUT} (an open transaction or a long query reads ${view}: see pg_stat_activity)`
      : code === DEADLOCK_DETECTED
        ? 'it deadlocked with another transaction (a migration or a removal running at the same time)'
        : coerceError(error).message;
  const remedy =
    code === LOCK_NOT_AVAILABLE
      ? 'end that transaction or query'
      : code === DEADLOCK_DETECTED
        ? 'let the other finish'
        : 'fix that';
  return `typed view ${view} could not be refreshed: ${cause}. Until it is, a key that appeared since has no column there and a value its column's type cannot hold reads null (every value is kept as sent in ${table}.data). To resolve: ${remedy}, then run '${command}'`;
}

const LOCK_NOT_AVAILABLE = '55P03';
const DEADLOCK_DETECTED = '40P01';
/**
 * What a view placed by placeView cannot show: its conflicts, the columns it
 * kept beyond `wanted` whose type cannot hold their key's (`typeOfName`:
 * the type the key's column has now, undefined for a column that shows no
 * key), and those that show no key. Undefined when it shows everything.
 */
export function keptColumns(
  placed: PlacedView,
  wanted: ReadonlySet<string>,
  typeOfName: (name: string) => string | undefined,
): KeptColumns | undefined {
  const conflicts = [...(placed.kept?.conflicts ?? [])];
  const orphans: string[] = [];
  for (const column of placed.layout) {
    if (wanted.has(column.name)) continue;
    const type = typeOfName(column.name);
    if (type === undefined) orphans.push(column.name);
    else if (!holdsType(column.type, type))
      conflicts.push(`${column.name}: ${column.type} → ${type}`);
  }
  return conflicts.length > 0 || orphans.length > 0 ? { conflicts, orphans } : undefined;
}

/** Whether hiresync.typed_view_blocks holds a signal for `schema.view` now. */
export async function isBlocked(
  trx: Transaction<Database>,
  schema: string,
  view: string,
): Promise<boolean> {
  const { rows: found } = await sql<{ present: boolean }>`
    select to_regclass('hiresync.typed_view_blocks') is not null as present`.execute(trx);
  if (!found[0]?.present) return false;
  const { rows } = await sql<{ blocked: boolean }>`
    select exists (select 1 from hiresync.typed_view_blocks
      where schema = ${schema} and view = ${view} and message is not null) as blocked`.execute(trx);
  return rows[0]?.blocked === true;
}
