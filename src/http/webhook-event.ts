/**
 * What a webhook delivery asks of hiresync: its body read as the vendor's
 * event (`{"action": …, "payload": …}`), and the plan made of it for one
 * account: records to soft-delete at once, one incremental run to queue, or
 * nothing. Pure functions: the route (webhook-routes.ts) acts on the plan.
 */

/** A webhook event as delivered: its action and payload, integers read exactly (as bigint). */
export interface WebhookEvent {
  action: string;
  payload: unknown;
}

/** Records of one resource that a delete event names. */
export interface WebhookDeletion {
  resource: string;
  /** Decimal text, never rounded through a JS number. */
  ids: string[];
}

/** What to do with an event for an account. */
export type WebhookPlan =
  /** Soft-delete these records (in order), each part of a resource the account syncs. */
  | { kind: 'delete'; deletions: WebhookDeletion[]; notSynced: string[] }
  /** Queue an incremental run of `resource`. */
  | { kind: 'run'; resource: string }
  /** Nothing to do, and why. */
  | { kind: 'ignore'; reason: string };

/**
 * The body as an event, or what is wrong with it. JSON integers are read as
 * bigint (from their source text), so an id beyond 2^53 is never rounded.
 */
export function parseWebhookEvent(body: Buffer): WebhookEvent | { problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'), (_key, value, context?: { source?: string }) =>
      typeof value === 'number' && /^-?\d+$/.test(context?.source ?? '')
        ? BigInt(context?.source as string)
        : value,
    );
  } catch {
    return { problem: 'the body is not JSON' };
  }
  const action = fieldOf(parsed, 'action');
  if (typeof action !== 'string' || !/^[a-z][a-z0-9_]{0,99}$/.test(action)) {
    return { problem: 'the body has no action (a lowercase word such as job_updated)' };
  }
  return { action, payload: fieldOf(parsed, 'payload') };
}

function fieldOf(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

/**
 * An id as decimal text: a JSON integer (read exactly) or a string of
 * digits, positive; else undefined. A number that is not a bigint (a
 * runtime without JSON.parse's source text) counts only when it is a safe
 * integer, so an id is never rounded.
 */
function idText(value: unknown): string | undefined {
  const text =
    typeof value === 'bigint'
      ? value.toString()
      : typeof value === 'number' && Number.isSafeInteger(value)
        ? String(value)
        : value;
  return typeof text === 'string' && /^[1-9]\d{0,18}$/.test(text) && BigInt(text) < 2n ** 63n
    ? text
    : undefined;
}

/**
 * The delete events and what each deletes: the resource and where its ids
 * are in the payload (../shared/interface.md, "Privacy and events").
 */
const DELETE_EVENTS: Readonly<
  Record<string, ReadonlyArray<{ resource: string; path: readonly string[]; list?: boolean }>>
> = {
  delete_candidate: [
    { resource: 'candidates', path: ['person', 'id'] },
    { resource: 'applications', path: ['person', 'deleted_application_ids'], list: true },
  ],
  job_deleted: [{ resource: 'jobs', path: ['job', 'id'] }],
  job_post_deleted: [{ resource: 'job_posts', path: ['job_post', 'id'] }],
};

/**
 * The vendor's actions whose resource their words do not name first: events
 * about an application named after its candidate (their payload carries the
 * application), and objects whose list has another name.
 */
export const ACTION_RESOURCES: Readonly<Record<string, string>> = {
  hire_candidate: 'applications',
  unhire_candidate: 'applications',
  reject_candidate: 'applications',
  unreject_candidate: 'applications',
  candidate_stage_change: 'applications',
  new_candidate_application: 'applications',
  new_prospect_application: 'applications',
  interview_deleted: 'scheduled_interviews',
  job_interview_stage_deleted: 'job_stages',
};

/**
 * The vendor's lists its events may name, matched besides the account's
 * own: `job_post_updated` names job_posts even for an account that syncs
 * jobs alone (which is then left alone), never jobs.
 */
const VENDOR_RESOURCES: readonly string[] = [
  'applications',
  'candidates',
  'departments',
  'job_posts',
  'job_stages',
  'jobs',
  'offers',
  'offices',
  'scheduled_interviews',
  'scorecards',
  'users',
];

/** Words of the action that mean another: the vendor's prospects are candidates. */
const WORD_ALIASES: Readonly<Record<string, string>> = {
  prospect: 'candidate',
  person: 'candidate',
};

/** The words a resource's name is matched by: `job_posts` → `job post`, `activities` → `activity`. */
function wordsOf(resource: string): string[] {
  const words = resource.split('_');
  const last = words.pop() ?? '';
  const singular = last.endsWith('ies')
    ? `${last.slice(0, -3)}y`
    : last.endsWith('s') && !last.endsWith('ss')
      ? last.slice(0, -1)
      : last;
  return [...words, singular];
}

/**
 * The resource an action names, when `synced` holds it; else undefined.
 * {@link ACTION_RESOURCES} first; else the action's words (split at `_`,
 * `prospect` and `person` read as `candidate`) are searched for the words
 * of each resource the account syncs or the vendor has
 * ({@link VENDOR_RESOURCES}), in a row (its name, the last word singular:
 * `job_posts` is `job post`), and the match that ends latest in the action
 * wins, the longer one of two ending at the same word: `job_post_created`
 * → `job_posts` (not `jobs`), `offer_updated` → `offers`,
 * `update_candidate` → `candidates`.
 */
export function resourceOfAction(action: string, synced: readonly string[]): string | undefined {
  const named = Object.hasOwn(ACTION_RESOURCES, action) ? ACTION_RESOURCES[action] : undefined;
  if (named !== undefined) return synced.includes(named) ? named : undefined;
  const words = action
    .split('_')
    .map((word) => (Object.hasOwn(WORD_ALIASES, word) ? WORD_ALIASES[word] : undefined) ?? word);
  let best: { resource: string; end: number; length: number } | undefined;
  for (const resource of new Set([...synced, ...VENDOR_RESOURCES])) {
    const target = wordsOf(resource);
    for (let start = 0; start + target.length <= words.length; start += 1) {
      if (!target.every((word, k) => words[start + k] === word)) continue;
      const end = start + target.length;
      if (!best || end > best.end || (end === best.end && target.length > best.length)) {
        best = { resource, end, length: target.length };
      }
    }
  }
  return best !== undefined && synced.includes(best.resource) ? best.resource : undefined;
}

/**
 * What to do with `event` for an account that syncs `synced`: a delete
 * event's records of the resources it syncs (`notSynced`: those it does
 * not, left alone); another event's resource, when it syncs it; else
 * nothing. A delete event whose id is missing or not a positive integer is
 * a problem (the body is not what the vendor sends).
 */
export function planWebhookEvent(
  event: WebhookEvent,
  synced: readonly string[],
): WebhookPlan | { problem: string } {
  // Own keys only: `constructor` is an action any object answers.
  const parts = Object.hasOwn(DELETE_EVENTS, event.action)
    ? DELETE_EVENTS[event.action]
    : undefined;
  if (parts) {
    const deletions: WebhookDeletion[] = [];
    const notSynced: string[] = [];
    for (const part of parts) {
      const value = part.path.reduce<unknown>((at, key) => fieldOf(at, key), event.payload);
      const where = `payload.${part.path.join('.')}`;
      let ids: string[];
      if (part.list) {
        if (value === undefined || value === null) ids = [];
        else if (!Array.isArray(value)) return { problem: `${where} is not a list of ids` };
        else {
          ids = value.map(idText).filter((id): id is string => id !== undefined);
          if (ids.length !== value.length)
            return { problem: `${where} holds a value that is not an id` };
        }
      } else {
        const id = idText(value);
        if (id === undefined) return { problem: `${where} is not an id` };
        ids = [id];
      }
      if (!synced.includes(part.resource)) {
        notSynced.push(part.resource);
      } else if (ids.length > 0) {
        deletions.push({ resource: part.resource, ids: [...new Set(ids)] });
      }
    }
    if (deletions.length === 0) {
      return {
        kind: 'ignore',
        reason:
          notSynced.length > 0
            ? `the account does not sync ${notSynced.join(' or ')}`
            : 'the event names no record',
      };
    }
    return { kind: 'delete', deletions, notSynced };
  }
  const resource = resourceOfAction(event.action, synced);
  return resource === undefined
    ? { kind: 'ignore', reason: `${event.action} names no resource the account syncs` }
    : { kind: 'run', resource };
}
