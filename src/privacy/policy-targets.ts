/**
 * The field policy against the resources' declarations: a key a resource's
 * schema reads as a typed value (an id, a timestamp) cannot be hashed, and a
 * reference table's column is filled from two places — its own list and the
 * objects nested in tracking links — so a rule on one is mirrored onto the
 * other (a referrer's name hashed in `referrers` is hashed wherever it comes from).
 */
import type { ResourceCatalog } from '../resources/index.js';
import { FieldPolicy, type FieldRule } from './field-policy.js';
import type { RecordPolicy } from './police-page.js';

/** Where a reference table's records are nested in tracking links, and its keys renamed there. */
const NESTED_REFERENCES: readonly {
  list: string;
  nested: string;
  /** The list's key → the nested object's key, where they differ. */
  renamed: Readonly<Record<string, string>>;
}[] = [
  { list: 'job_boards', nested: 'job_board', renamed: {} },
  { list: 'referrers', nested: 'credited_to', renamed: {} },
  { list: 'sources', nested: 'source', renamed: { name: 'public_name' } },
];

function mirrorOf(rule: FieldRule): FieldRule | undefined {
  const [first, ...rest] = rule.path;
  if (first === undefined) return undefined;
  if (rule.resource === 'tracking_links') {
    const ref = NESTED_REFERENCES.find((r) => r.nested === first);
    const [key, ...deeper] = rest;
    if (!ref || key === undefined || (key === 'id' && deeper.length === 0)) return undefined;
    const listKey = Object.entries(ref.renamed).find(([, nested]) => nested === key)?.[0] ?? key;
    return { resource: ref.list, path: [listKey, ...deeper], action: rule.action };
  }
  const ref = NESTED_REFERENCES.find((r) => r.list === rule.resource);
  if (!ref) return undefined;
  return {
    resource: 'tracking_links',
    path: [ref.nested, ref.renamed[first] ?? first, ...rest],
    action: rule.action,
  };
}

const same = (a: FieldRule, b: FieldRule) =>
  a.resource === b.resource && a.path.join('.') === b.path.join('.');

/**
 * The policy with each reference column's rule mirrored where the same
 * column is filled from, or a problem when the two places were given
 * different actions.
 */
export function withMirroredReferences(
  policy: FieldPolicy,
): { policy: FieldPolicy } | { problem: string } {
  const more: FieldRule[] = [];
  for (const rule of policy.rules) {
    const mirror = mirrorOf(rule);
    if (!mirror) continue;
    const given = policy.rules.find((r) => same(r, mirror));
    if (given && given.action !== mirror.action) {
      return {
        problem: `${rule.resource}.${rule.path.join('.')}=${rule.action} and ${given.resource}.${given.path.join('.')}=${given.action} fill the same column: give them the same action`,
      };
    }
    if (!given && !more.some((r) => same(r, mirror))) more.push(mirror);
  }
  return { policy: policy.with(more) };
}

/** A record of `resource` holding `value` at `path` (and its id). */
function probeRecord(path: readonly string[], value: unknown): Record<string, unknown> {
  const record: Record<string, unknown> = { id: 1 };
  let node = record;
  for (const [i, key] of path.entries()) {
    if (i === path.length - 1) node[key] = value;
    else node = node[key] = {} as Record<string, unknown>;
  }
  return record;
}

/**
 * Problems of `policy` against the declared resources: a hash rule on a key
 * the resource's schema reads as a typed value (its hash, a string, would be
 * rejected every time; drop it instead), or whose mirror (see
 * {@link withMirroredReferences}) lands on such a key.
 */
export function policyTargetProblems(policy: FieldPolicy, catalog: ResourceCatalog): string[] {
  const problems: string[] = [];
  for (const rule of policy.rules) {
    const reason = typedReason(rule, catalog);
    if (reason !== undefined) {
      problems.push(
        `${rule.resource}.${rule.path.join('.')}=hash: ${rule.resource} stores ${rule.path.join('.')} as a typed value (${reason}), so its hash could never be stored; drop it instead`,
      );
      continue;
    }
    // The mirror hashes the same column where it is filled from the other place,
    // whose resource may type the key where this one does not (referrers' user_id).
    const mirror = rule.action === 'hash' ? mirrorOf(rule) : undefined;
    const mirrorReason = mirror && typedReason(mirror, catalog);
    if (mirror && mirrorReason !== undefined) {
      problems.push(
        `${rule.resource}.${rule.path.join('.')}=hash: it applies to ${mirror.resource}.${mirror.path.join('.')} too (the same column), which ${mirror.resource} stores as a typed value (${mirrorReason}), so its hash could never be stored; drop it instead`,
      );
    }
  }
  return problems;
}

/** Why `rule`'s hash could not be stored (its key is typed by the resource's schema); undefined when it can. */
function typedReason(rule: FieldRule, catalog: ResourceCatalog): string | undefined {
  const declaration = catalog.get(rule.resource);
  if (!declaration || rule.action !== 'hash') return undefined;
  return declaration.validate(probeRecord(rule.path, 'hmac-sha256:0'));
}

/**
 * The policy of `HIRESYNC_FIELD_POLICY` as the resources of `catalog` store
 * it: checked (no hash of a typed key) and mirrored onto the reference
 * columns tracking links fill; problems name the item. Called before any
 * connection is made (createApp, reapply-policy), so a problem exits 2.
 */
export function resolvePolicy(
  policy: RecordPolicy,
  catalog: ResourceCatalog,
): { policy: RecordPolicy } | { problems: string[] } {
  const problems = policyTargetProblems(policy.policy, catalog);
  if (problems.length > 0) return { problems };
  const mirrored = withMirroredReferences(policy.policy);
  if ('problem' in mirrored) return { problems: [mirrored.problem] };
  return { policy: policy.with(mirrored.policy) };
}

/**
 * The rules that police what `resource`'s table holds, as one policy of that
 * resource: its own rules, and for a reference table (job_boards, referrers,
 * sources) also those of the copies nested in tracking links that the same
 * table stores (a source copied from a link holds `public_name` where the
 * list's holds `name`), re-rooted at the table. `policy` is resolved (its
 * reference rules mirrored: see withMirroredReferences), so the two sets
 * agree and only the renamed keys differ. A nested `id` rule is left out: a
 * copy without its id is never stored. Used by reapply-policy, which reads
 * rows without knowing which of the two wrote them.
 */
export function storedRecordPolicy(policy: FieldPolicy, resource: string): FieldPolicy {
  const own = policy.rules.filter((r) => r.resource === resource);
  const ref = NESTED_REFERENCES.find((r) => r.list === resource);
  const nested = ref
    ? policy.rules
        .filter((r) => r.resource === 'tracking_links' && r.path[0] === ref.nested)
        .map((r) => ({ resource, path: r.path.slice(1), action: r.action }))
        .filter((r) => r.path.length > 0 && !(r.path.length === 1 && r.path[0] === 'id'))
        .filter((r) => !own.some((o) => same(o, r)))
    : [];
  return new FieldPolicy([...own, ...nested]);
}
