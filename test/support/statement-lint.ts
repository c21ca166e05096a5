import { parse } from 'libpg-query';

/**
 * The functions a statement may call unqualified: each is pg_catalog's
 * (test/integration/statement-lint-allowlist.test.ts checks that it exists
 * there), and hiresync's connections search pg_catalog only (see
 * SEARCH_PATH in src/warehouse/database.ts), so none can be planted. Any
 * other function is called with its schema (`hiresync.safe_bigint(…)`).
 */
export const PG_CATALOG_FUNCTIONS: ReadonlySet<string> = new Set([
  'array_agg',
  'btrim',
  'cardinality',
  'concat_ws',
  'count',
  'current_database',
  'current_setting',
  'format',
  'format_type',
  'hashtext',
  'jsonb_agg',
  'jsonb_array_elements',
  'jsonb_build_object',
  'jsonb_each',
  'jsonb_to_record',
  'jsonb_to_recordset',
  'jsonb_typeof',
  'make_interval',
  'max',
  'md5',
  'min',
  'now',
  'obj_description',
  'pg_advisory_unlock',
  'pg_advisory_xact_lock',
  'pg_advisory_xact_lock_shared',
  'pg_backend_pid',
  'pg_identify_object',
  'pg_try_advisory_lock',
  'pg_try_advisory_xact_lock',
  'set_config',
  'statement_timestamp',
  'strpos',
  'substr',
  'sum',
  'to_char',
  'to_jsonb',
  'to_regclass',
  'trunc',
  'unnest',
]);

/** Statement kinds that read or write rows: rule R1 applies to them (DDL is exempt). */
const DML = new Set(['SelectStmt', 'InsertStmt', 'UpdateStmt', 'DeleteStmt']);

type Node = Record<string, unknown>;

interface RangeVar {
  schemaname?: string;
  relname: string;
  alias?: { aliasname: string };
}

const isObject = (value: unknown): value is Node =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every node of `tree`, with the key it sits under, depth first. */
function* walk(tree: unknown, key = ''): Generator<[key: string, node: Node]> {
  if (Array.isArray(tree)) {
    for (const item of tree) yield* walk(item, key);
    return;
  }
  if (!isObject(tree)) return;
  yield [key, tree];
  for (const [k, v] of Object.entries(tree)) yield* walk(v, k);
}

/** The relation a node names: a `RangeVar`, or the target of an insert, update or delete. */
function rangeVarOf(key: string, node: Node): RangeVar | undefined {
  if (key === 'RangeVar') return node as unknown as RangeVar;
  return undefined;
}

const strings = (list: unknown): string[] =>
  Array.isArray(list)
    ? list.map((item) => (isObject(item) && isObject(item.String) ? String(item.String.sval) : ''))
    : [];

/** A `$n`, possibly cast (`$6::text`). */
function isParam(node: unknown): boolean {
  if (!isObject(node)) return false;
  if (isObject(node.ParamRef)) return true;
  if (isObject(node.TypeCast)) return isParam(node.TypeCast.arg);
  return false;
}

/** The column a node names (`t.account` → ['t', 'account']), possibly cast. */
function columnOf(node: unknown): string[] | undefined {
  if (!isObject(node)) return undefined;
  if (isObject(node.ColumnRef)) return strings(node.ColumnRef.fields);
  if (isObject(node.TypeCast)) return columnOf(node.TypeCast.arg);
  return undefined;
}

/** The conjuncts of a condition: the terms of its top-level `and`s. */
function conjuncts(node: unknown): Node[] {
  if (!isObject(node)) return [];
  const bool = node.BoolExpr;
  if (isObject(bool) && bool.boolop === 'AND_EXPR' && Array.isArray(bool.args)) {
    return bool.args.flatMap(conjuncts);
  }
  return [node];
}

const isSharedTable = (relation: RangeVar) =>
  relation.schemaname === 'hiresync' && relation.relname.startsWith('data_');

const nameOf = (relation: RangeVar) => relation.alias?.aliasname ?? relation.relname;

/** The relations a query reads in its own FROM (joins included, subqueries not), and its join conditions. */
function fromItems(items: unknown, relations: RangeVar[], conditions: unknown[]): void {
  for (const item of Array.isArray(items) ? items : [items]) {
    if (!isObject(item)) continue;
    if (isObject(item.RangeVar)) relations.push(item.RangeVar as unknown as RangeVar);
    if (isObject(item.JoinExpr)) {
      fromItems(item.JoinExpr.larg, relations, conditions);
      fromItems(item.JoinExpr.rarg, relations, conditions);
      conditions.push(item.JoinExpr.quals);
    }
  }
}

/**
 * Rule R1 for one query (a select, update or delete, at any depth): each
 * shared table it names in its own FROM or as its target is bound, by
 * `<alias>.account = $n` (or `= any($n)`) among the top-level conjuncts of
 * its WHERE or a join's ON, or by `<alias>.account = <other>.account` with
 * `<other>` bound. An unqualified `account` counts when the query names one
 * relation. `outer`: the references bound by construction anywhere in the
 * statement (see {@link boundByConstruction}), which a correlated subquery
 * may join on (`s.account = a.account`, `a` being `unnest($1::text[]) a`).
 */
function unboundIn(query: Node, kind: string, outer: ReadonlySet<string>): string[] {
  const relations: RangeVar[] = [];
  const conditions: unknown[] = [query.whereClause];
  if (kind === 'SelectStmt') fromItems(query.fromClause, relations, conditions);
  if (kind === 'UpdateStmt') {
    relations.push(query.relation as RangeVar);
    fromItems(query.fromClause, relations, conditions);
  }
  if (kind === 'DeleteStmt') {
    relations.push(query.relation as RangeVar);
    fromItems(query.usingClause, relations, conditions);
  }
  const shared = relations.filter(isSharedTable);
  if (shared.length === 0) return [];
  const names = relations.map(nameOf);
  const aliasOf = (column: string[]): string | undefined => {
    if (column.at(-1) !== 'account') return undefined;
    if (column.length === 2) return column[0];
    return column.length === 1 && names.length === 1 ? names[0] : undefined;
  };
  const bound = new Set<string>(outer);
  const joins: Array<[string, string]> = [];
  for (const term of conditions.flatMap(conjuncts)) {
    const expr = term.A_Expr;
    if (!isObject(expr) || strings(expr.name).join('') !== '=') continue;
    const left = columnOf(expr.lexpr);
    const right = columnOf(expr.rexpr);
    const byParam =
      expr.kind === 'AEXPR_OP' || expr.kind === 'AEXPR_OP_ANY'
        ? left && isParam(expr.rexpr)
          ? aliasOf(left)
          : right && isParam(expr.lexpr) && expr.kind === 'AEXPR_OP'
            ? aliasOf(right)
            : undefined
        : undefined;
    if (byParam !== undefined) bound.add(byParam);
    if (expr.kind === 'AEXPR_OP' && left && right) {
      const a = aliasOf(left);
      const b = aliasOf(right);
      if (a !== undefined && b !== undefined) joins.push([a, b]);
    }
  }
  for (let grew = true; grew; ) {
    grew = false;
    for (const [a, b] of joins) {
      if (bound.has(a) !== bound.has(b)) {
        bound.add(a);
        bound.add(b);
        grew = true;
      }
    }
  }
  return shared
    .filter((relation) => !bound.has(nameOf(relation)))
    .map(
      (relation) =>
        `R1: hiresync.${relation.relname}${relation.alias ? ` as ${relation.alias.aliasname}` : ''} is read or written without its account bound (${nameOf(relation)}.account = $n in its WHERE or ON)`,
    );
}

/**
 * The references of a statement whose rows are bound by construction: a
 * function of parameters only in FROM (`unnest($1::text[]) a(account)`: the
 * accounts asked for), and a CTE's (its body's reads are linted as any
 * query's). One set for the whole statement: an alias is taken to mean the
 * same relation wherever it is used, as hiresync's statements use them.
 */
function boundByConstruction(stmt: Node, ctes: ReadonlySet<string>): Set<string> {
  const bound = new Set<string>();
  for (const [key, node] of walk(stmt)) {
    if (key === 'RangeVar') {
      const relation = node as unknown as RangeVar;
      if (relation.schemaname === undefined && ctes.has(relation.relname))
        bound.add(nameOf(relation));
    }
    if (key === 'RangeFunction' && isObject(node.alias)) {
      const calls = [...walk(node.functions)].filter(([k]) => k === 'FuncCall');
      const ofParams = calls.every(
        ([, call]) => Array.isArray(call.args) && call.args.every(isParam),
      );
      if (calls.length > 0 && ofParams) bound.add(String(node.alias.aliasname));
    }
  }
  return bound;
}

/** Rule R1 for an insert: into a shared table, it lists `account` with a `$n` value. */
function unboundInsert(insert: Node): string[] {
  const relation = insert.relation as RangeVar;
  if (!isSharedTable(relation)) return [];
  const problem = `R1: an insert into hiresync.${relation.relname} does not give account a $n value`;
  const columns = Array.isArray(insert.cols)
    ? insert.cols.map((c) => (isObject(c) && isObject(c.ResTarget) ? c.ResTarget.name : undefined))
    : [];
  const at = columns.indexOf('account');
  if (at < 0) return [problem];
  const select = isObject(insert.selectStmt) ? insert.selectStmt.SelectStmt : undefined;
  if (!isObject(select)) return [problem];
  if (Array.isArray(select.valuesLists)) {
    const rows = select.valuesLists.map((row) =>
      isObject(row) && isObject(row.List) && Array.isArray(row.List.items) ? row.List.items : [],
    );
    return rows.every((row) => isParam(row[at])) ? [] : [problem];
  }
  const target = Array.isArray(select.targetList) ? select.targetList[at] : undefined;
  const value = isObject(target) && isObject(target.ResTarget) ? target.ResTarget.val : undefined;
  return isParam(value) ? [] : [problem];
}

/**
 * The problems of one statement as Postgres parses it (libpg-query, the
 * real parser); empty when it is fine. Rules:
 *
 * - R1: a select, insert, update or delete (CTEs and subqueries included)
 *   that reads or writes a shared table `hiresync.data_*` binds the account
 *   for each reference: `<alias>.account = $n` (or `= any($n)`), or a join
 *   on `account` to a reference that does, in its WHERE or ON; an insert
 *   into one lists `account` with a `$n` value. DDL is exempt (a view's
 *   definition names its account as a literal).
 * - R2: every relation is schema-qualified, CTE names aside; no statement
 *   mentions `search_path`.
 * - R3: a function called unqualified is one of {@link PG_CATALOG_FUNCTIONS};
 *   any other is called with its schema.
 */
export async function lintStatement(text: string): Promise<string[]> {
  const problems: string[] = [];
  if (/search_path/i.test(text)) problems.push('R2: the statement mentions search_path');
  let tree: unknown;
  try {
    tree = await parse(text);
  } catch (error) {
    return [...problems, `does not parse: ${(error as Error).message}`];
  }
  const statements = isObject(tree) && Array.isArray(tree.stmts) ? tree.stmts : [];
  for (const entry of statements) {
    const stmt = isObject(entry) ? entry.stmt : undefined;
    if (!isObject(stmt)) continue;
    const top = Object.keys(stmt)[0] ?? '';
    const ctes = new Set<string>();
    for (const [key, node] of walk(stmt)) {
      if (key === 'CommonTableExpr') ctes.add(String(node.ctename));
    }
    const outer = boundByConstruction(stmt, ctes);
    for (const [key, node] of walk(stmt)) {
      const relation =
        rangeVarOf(key, node) ??
        (key === 'relation' && typeof node.relname === 'string'
          ? (node as unknown as RangeVar)
          : undefined);
      if (relation && relation.schemaname === undefined && !ctes.has(relation.relname)) {
        problems.push(`R2: relation ${relation.relname} is not schema-qualified`);
      }
      if (key === 'FuncCall') {
        const name = strings(node.funcname);
        if (name.length === 1 && !PG_CATALOG_FUNCTIONS.has(name[0] ?? '')) {
          problems.push(
            `R3: function ${name[0]} is called unqualified and is not in the lint's allowlist of pg_catalog functions`,
          );
        }
      }
      if (DML.has(top)) {
        if (key === 'SelectStmt' || key === 'UpdateStmt' || key === 'DeleteStmt') {
          problems.push(...unboundIn(node, key, outer));
        }
        if (key === 'InsertStmt') problems.push(...unboundInsert(node));
      }
    }
  }
  return [...new Set(problems)];
}
