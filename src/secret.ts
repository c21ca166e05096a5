import { inspect } from 'node:util';
import { RadixTree } from './radix-tree.js';

/** Replaces a secret wherever hiresync stores or prints text. */
export const REDACTED = '[redacted]';

/** Values shorter than this are not redacted: they would blank out ordinary words. */
const MIN_SECRET_LENGTH = 4;

/**
 * How long a value registered without `pinned` or `slot` (an authorization
 * code, a refresh token, a token just replaced) is kept after it was last
 * registered: an answer to a request that carried it can still echo it. A
 * token in force is replaced at most a minute before it expires (`renewAt`),
 * so an hour later it has long expired and no request carries it any more.
 */
export const RECENT_MS = 60 * 60_000;

/**
 * At most this many such recent values are kept (the oldest go first): a
 * worker of 5,000 accounts replaces about that many tokens an hour, and this
 * bounds what a burst of registrations can take (about 1.3 KB of heap per
 * JWT-sized token: 13 MB; bench/redaction-scale.ts).
 */
export const MAX_RECENT = 10_000;

/**
 * Why a value is held; its forms are redacted while any reason is left, and
 * forgotten (the tree of forms gives their nodes back) once none is. Memory
 * stays bounded however long a worker runs:
 * - `pinned`: the configured credentials, an account's secret and the Basic
 *   credential made of it, kept for the life of the process: one set per
 *   account (and per change of its credentials);
 * - `slots`: how many holders (token providers: one per account, made again
 *   when its credentials change) have it as their token in force; a holder
 *   has one value, and the one it replaces becomes recent;
 * - `recent`: in {@link recent}, which forgets a value {@link RECENT_MS}
 *   after it was last registered (by the monotonic clock, so that a step of
 *   the wall clock neither keeps nor drops it), and keeps {@link MAX_RECENT}
 *   at most.
 * So a worker minting a token per account per hour holds, for N accounts,
 * N tokens in force and at most the last hour's replaced ones, whether it has
 * run for an hour or for months.
 */
interface Held {
  pinned: boolean;
  slots: number;
  recent: boolean;
}

const held = new Map<string, Held>();
/** The token each holder has in use now (a token provider), by holder. */
const slots = new Map<string, string>();
/** Recent values and when each was last registered, oldest first (Map order). */
const recent = new Map<string, number>();
/** No recent value is due to be forgotten before this time (a redaction checks only this). */
let nextForgetAt = Number.POSITIVE_INFINITY;
/**
 * Every form of every value held, each with a count of the values that have
 * it: registering or forgetting a value adds or removes its forms only, and a
 * line is scanned once whatever the number of secrets (see RadixTree).
 */
const forms = new RadixTree();

/** A value as it may appear in text: raw, base64, percent-encoded, form-encoded, JSON-escaped. */
function encodingsOf(value: string): string[] {
  const all = new Set([
    value,
    Buffer.from(value).toString('base64'),
    Buffer.from(value).toString('base64url'),
    encodeURIComponent(value),
    new URLSearchParams({ v: value }).toString().slice(2),
    JSON.stringify(value).slice(1, -1),
  ]);
  return [...all].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

/** The record of `value`, made (and its forms added) if it is not held yet. */
function hold(value: string): Held {
  let record = held.get(value);
  if (record === undefined) {
    record = { pinned: false, slots: 0, recent: false };
    held.set(value, record);
    for (const form of encodingsOf(value)) forms.add(form);
  }
  return record;
}

/** Forgets `value` (and its forms) once no reason to hold it is left. */
function release(value: string, record: Held): void {
  if (record.pinned || record.slots > 0 || record.recent) return;
  held.delete(value);
  for (const form of encodingsOf(value)) forms.remove(form);
}

/** Keeps `value` among the recent ones, as registered now. */
function remember(value: string, record: Held, now: number): void {
  if (record.pinned) return;
  recent.delete(value);
  recent.set(value, now);
  record.recent = true;
  nextForgetAt = Math.min(nextForgetAt, now + RECENT_MS);
}

/** Forgets the recent values registered {@link RECENT_MS} ago or more, and any beyond {@link MAX_RECENT}. */
function forgetStale(now: number): void {
  nextForgetAt = Number.POSITIVE_INFINITY;
  for (const [value, at] of recent) {
    if (recent.size <= MAX_RECENT && now - at < RECENT_MS) {
      nextForgetAt = at + RECENT_MS;
      return;
    }
    recent.delete(value);
    const record = held.get(value);
    if (record === undefined) continue;
    record.recent = false;
    release(value, record);
  }
}

/**
 * Remembers a secret value (and its encodings) so that {@link redactSecrets}
 * blanks it out. `pinned` values (the configured credentials) are kept for
 * the life of the process; a `slot`'s value (a holder's token in force) until
 * the holder registers another; any other value (access tokens, codes,
 * refresh tokens, which rotate) for {@link RECENT_MS} after it was last
 * registered. Costs O(the value's length), whatever else is registered.
 */
export function registerSecret(
  value: string,
  options: { pinned?: boolean; slot?: string } = {},
): void {
  if (value.length < MIN_SECRET_LENGTH) return;
  // A holder's token is handed out again and again: a no-op while it is unchanged.
  const previous = options.slot === undefined ? undefined : slots.get(options.slot);
  if (previous === value) return;
  const now = performance.now();
  forgetStale(now);
  if (options.slot !== undefined) {
    slots.set(options.slot, value);
    hold(value).slots += 1;
    const replaced = previous === undefined ? undefined : held.get(previous);
    if (previous !== undefined && replaced !== undefined) {
      // The token it replaces may still echo in an answer in flight: kept among the recent ones.
      replaced.slots -= 1;
      remember(previous, replaced, now);
    }
    return;
  }
  const record = hold(value);
  if (options.pinned) record.pinned = true;
  else remember(value, record, now);
}

/** How many values the registry holds (pinned, in force, recent), once each. */
export function registeredSecretCount(): number {
  forgetStale(performance.now());
  return held.size;
}

/**
 * What the registry holds and the work it has done: values, their distinct
 * forms, the nodes of the tree of forms, and `steps`, the tree's nodes
 * visited so far by every registration, forgetting and redaction (a count of
 * work for tests and benchmarks).
 */
export function secretRegistryStats(): {
  values: number;
  forms: number;
  nodes: number;
  steps: number;
} {
  return { values: held.size, forms: forms.size, nodes: forms.nodes, steps: forms.steps };
}

/**
 * Credentials in the shapes HTTP carries them, whether or not hiresync knows
 * the value (a token minted before a restart, a status process that never saw
 * it): `Bearer`/`Basic` and a token of 8+ characters holding at least one
 * non-letter (so "Basic authentication" stays as it is), and `name=value`
 * pairs of credential fields.
 */
const CREDENTIAL_SHAPES =
  /\b(Bearer|Basic)(\s+)(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}|\b(client_secret|access_token|refresh_token|api_key)(["']?\s*[:=]\s*["']?)[^"'&\s,;}]{4,}/gi;

/**
 * `text` with every registered secret, in any of its encodings, and every
 * `Bearer …`/`Basic …` credential replaced by `[redacted]`. One scan of the
 * text for the registered values, whatever their number, then one
 * regular-expression scan for the shapes.
 */
export function redactSecrets(text: string): string {
  const now = performance.now();
  if (now >= nextForgetAt) forgetStale(now);
  const out = forms.replaceAll(text, REDACTED);
  return out.replace(
    CREDENTIAL_SHAPES,
    (_match, scheme?: string, space?: string, field?: string, sep?: string) =>
      scheme !== undefined ? `${scheme}${space}${REDACTED}` : `${field}${sep}${REDACTED}`,
  );
}

/** An Error whose message and stack are redacted; name kept. Returns `error` itself when clean. */
export function redactError(error: Error): Error {
  const message = redactSecrets(error.message);
  const stack = error.stack === undefined ? undefined : redactSecrets(error.stack);
  if (message === error.message && stack === error.stack) return error;
  const clean = new Error(message);
  clean.name = error.name;
  clean.stack = stack;
  return clean;
}

/** What prints, logs and JSON-encodes as `[redacted]`, and inspects as its class's name only. */
export abstract class Redacted {
  toString(): string {
    return REDACTED;
  }
  toJSON(): string {
    return REDACTED;
  }
  [inspect.custom](): string {
    return `${this.constructor.name}([redacted])`;
  }
}

/**
 * A secret value (client secret, API key, access token) that cannot leak by
 * accident: printing, logging or JSON-encoding it yields `[redacted]`. Only
 * `reveal()` hands out the value, at the one place that must send it. Every
 * Secret registers itself with {@link redactSecrets}, so the value is blanked
 * out of any text hiresync stores or prints, even an API error that echoes it.
 */
export class Secret extends Redacted {
  readonly #value: string;
  constructor(value: string) {
    super();
    this.#value = value;
    registerSecret(value, { pinned: true });
  }
  reveal(): string {
    return this.#value;
  }
}

/**
 * Text from outside (an API body, a header) shortened for a message: redacted
 * first, then cut, so a secret straddling the cut is never left half-visible.
 */
export function excerpt(text: string, max: number): string {
  return redactSecrets(text).slice(0, max);
}

/** True when `text` holds a secret hiresync holds (in any encoding it knows). */
export function containsSecret(text: string): boolean {
  return redactSecrets(text) !== text;
}
