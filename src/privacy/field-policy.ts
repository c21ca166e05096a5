/**
 * `HIRESYNC_FIELD_POLICY`: what to drop or hash of each resource's records
 * before anything of them is stored. Pure: the text is read into a tree of
 * rules per resource, and {@link policeRecord} applies one resource's tree to
 * a parsed record in place. Hashing is the FieldHasher's (field-hasher.ts).
 */
import './raw-json.js';

/** What happens to a value under a policy path. */
export type FieldAction = 'drop' | 'hash';

const ACTIONS: readonly FieldAction[] = ['drop', 'hash'];

/** One item of the policy, as written: `RESOURCE.KEY=ACTION`. */
export interface FieldRule {
  readonly resource: string;
  /** The key's path: one segment for a top-level key, more for a dotted path. */
  readonly path: readonly string[];
  readonly action: FieldAction;
}

/**
 * The rules of one resource as a tree of keys: a node with an action ends a
 * path; a node without one has children. `strongest` is what a value the
 * walk cannot enter gets (drop when any path below is dropped, else hash).
 */
export interface PolicyNode {
  readonly action?: FieldAction | undefined;
  readonly children: ReadonlyMap<string, PolicyNode>;
  readonly strongest: FieldAction;
}

/** A segment of a path: a JSON key without dots, commas, `=` or spaces. */
const SEGMENT = /^[^\s.,=]+$/;

/** The rules of a policy, by resource, read from `HIRESYNC_FIELD_POLICY`. */
export class FieldPolicy {
  readonly rules: readonly FieldRule[];
  readonly #trees: ReadonlyMap<string, PolicyNode>;

  constructor(rules: readonly FieldRule[]) {
    this.rules = Object.freeze([...rules]);
    this.#trees = treesOf(this.rules);
  }

  /** True when any rule hashes (HIRESYNC_HASH_KEY is then required). */
  get hashes(): boolean {
    return this.rules.some((r) => r.action === 'hash');
  }

  /** The resources the policy names. */
  get resources(): readonly string[] {
    return [...this.#trees.keys()];
  }

  /** The tree of `resource`'s rules; undefined when the policy leaves its records alone. */
  treeOf(resource: string): PolicyNode | undefined {
    return this.#trees.get(resource);
  }

  /**
   * The rules of `resource` as one stable text (`key.path=action,…`, sorted):
   * what a stored row was written under, so that a change can be told.
   */
  describe(resource: string): string {
    return this.rules
      .filter((r) => r.resource === resource)
      .map((r) => `${r.path.join('.')}=${r.action}`)
      .sort()
      .join(',');
  }

  /** This policy with more rules (the mirrors of reference tables' columns). */
  with(more: readonly FieldRule[]): FieldPolicy {
    return more.length === 0 ? this : new FieldPolicy([...this.rules, ...more]);
  }
}

/** Reads `RESOURCE.KEY=ACTION` items; a problem names the item and what is wrong. */
export function parseFieldPolicy(text: string): { policy: FieldPolicy } | { problem: string } {
  const rules: FieldRule[] = [];
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const item of items) {
    const problem = itemProblem(item);
    if (problem) return { problem: `item ${JSON.stringify(item)} ${problem}` };
    const [target = '', action = ''] = item.split('=').map((s) => s.trim());
    const [resource = '', ...path] = target.split('.');
    rules.push({ resource, path, action: action as FieldAction });
  }
  const conflict = conflictOf(rules);
  if (conflict) return { problem: conflict };
  return { policy: new FieldPolicy(rules) };
}

function itemProblem(item: string): string | undefined {
  const parts = item.split('=');
  if (parts.length !== 2) return 'is not RESOURCE.KEY=ACTION (for example candidates.emails=hash)';
  const [target = '', action = ''] = parts.map((s) => s.trim());
  if (!ACTIONS.includes(action as FieldAction)) {
    return `has the action ${JSON.stringify(action)}: use drop or hash`;
  }
  const segments = target.split('.');
  if (segments.length < 2) {
    return 'names no key: write RESOURCE.KEY, or RESOURCE.KEY.KEY for a key in a nested object';
  }
  if (!segments.every((s) => SEGMENT.test(s))) {
    return 'has an empty key or one with spaces, commas or = in it';
  }
  if (segments.length === 2 && segments[1] === 'id') {
    return "names id, the record's key: hiresync stores every record by it, so it can be neither dropped nor hashed";
  }
  return undefined;
}

/** The first pair of rules that contradict (the same path twice, or one path under another). */
function conflictOf(rules: readonly FieldRule[]): string | undefined {
  const text = (r: FieldRule) => `${r.resource}.${r.path.join('.')}`;
  for (const [i, a] of rules.entries()) {
    for (const b of rules.slice(i + 1)) {
      if (a.resource !== b.resource) continue;
      const [short, long] = a.path.length <= b.path.length ? [a, b] : [b, a];
      if (!short.path.every((s, k) => long.path[k] === s)) continue;
      if (short.path.length === long.path.length) {
        if (a.action === b.action) continue;
        return `item ${text(a)} is given both drop and hash: keep one`;
      }
      return `items ${text(short)}=${short.action} and ${text(long)}=${long.action} overlap: ${text(short)} already covers everything under it; keep one`;
    }
  }
  return undefined;
}

interface MutableNode {
  action?: FieldAction;
  children: Map<string, MutableNode>;
  strongest: FieldAction;
}

function treesOf(rules: readonly FieldRule[]): ReadonlyMap<string, PolicyNode> {
  const trees = new Map<string, MutableNode>();
  for (const rule of rules) {
    let node = trees.get(rule.resource);
    if (!node) {
      node = { children: new Map(), strongest: rule.action };
      trees.set(rule.resource, node);
    }
    for (const segment of rule.path) {
      if (rule.action === 'drop') node.strongest = 'drop';
      let child = node.children.get(segment);
      if (!child) {
        child = { children: new Map(), strongest: rule.action };
        node.children.set(segment, child);
      }
      node = child;
    }
    node.action = rule.action;
    if (rule.action === 'drop') node.strongest = 'drop';
  }
  return trees;
}

/** Turns a value into the text stored for it (`hmac-sha256:<hex>`). */
export type HashValue = (value: unknown) => string;

type JsonObject = Record<string, unknown>;

/** An object the walk can enter: not an array, not null, not a number kept exactly (JSON.rawJSON). */
function isEnterable(value: unknown): value is JsonObject {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !JSON.isRawJSON(value)
  );
}

/**
 * Applies `action` to `holder[key]` (null stays null: nothing to hide). A
 * dropped key is set to undefined, which JSON.stringify leaves out as it
 * would a deleted one, and which leaves the object's shape alone (a delete
 * turns it into a slow dictionary: 40% more CPU to police and print a page).
 */
function act(holder: JsonObject, key: string, action: FieldAction, hash: HashValue): void {
  if (action === 'drop') holder[key] = undefined;
  else if (holder[key] !== null && holder[key] !== undefined) holder[key] = hash(holder[key]);
}

/**
 * Applies a resource's tree to `record` in place. A path is followed through
 * nested objects and through arrays of objects (each element in turn); a
 * value it cannot enter — a string, number or boolean where an object was
 * expected, or an array holding anything but objects — gets the strongest
 * action of the paths below it, so no value under a policy path survives a
 * change of shape. Keys the record lacks are left absent; a dropped key is
 * left undefined (absent from the record's JSON text).
 */
export function policeRecord(record: JsonObject, tree: PolicyNode, hash: HashValue): void {
  for (const [key, node] of tree.children) {
    const value = record[key];
    if (value === undefined || !Object.hasOwn(record, key)) continue;
    if (node.action !== undefined) {
      act(record, key, node.action, hash);
    } else if (value === null) {
      // Nothing below to hide.
    } else if (isEnterable(value)) {
      policeRecord(value, node, hash);
    } else if (Array.isArray(value) && value.every((e) => e === null || isEnterable(e))) {
      for (const element of value) if (element !== null) policeRecord(element, node, hash);
    } else {
      act(record, key, node.strongest, hash);
    }
  }
}

/** What a record that is not an object becomes: its whole text hashed, or withheld. */
export const WITHHELD = '[withheld by HIRESYNC_FIELD_POLICY]';

/**
 * The record to store for `record` under `tree`: the same object, policed in
 * place, or — for a record that is not an object (it will be rejected, and
 * the policy cannot tell which of it is a key's) — its hash, or
 * {@link WITHHELD} when any path of the tree drops.
 */
export function policedRecord(record: unknown, tree: PolicyNode, hash: HashValue): unknown {
  if (isEnterable(record)) {
    policeRecord(record, tree, hash);
    return record;
  }
  if (record === null) return null;
  return tree.strongest === 'drop' ? WITHHELD : hash(record);
}
