import { inspect } from 'node:util';

/** Replaces a secret wherever hiresync stores or prints text. */
export const REDACTED = '[redacted]';

/** Values shorter than this are not redacted: they would blank out ordinary words. */
const MIN_SECRET_LENGTH = 4;

/** How many rotating values (access tokens, their credentials) are remembered. */
const MAX_ROTATING = 100;

/** Secrets of the configuration: kept for the life of the process. */
const pinned = new Set<string>();
/** Rotating secrets (access tokens), oldest first; bounded by MAX_ROTATING. */
const rotating = new Set<string>();
/** The token each holder has in use now (a token provider), by holder: one value per holder, never evicted. */
const slots = new Map<string, string>();
let pattern: RegExp | undefined;
let patternStale = false;

/** A value as it may appear in text: raw, base64, percent-encoded, form-encoded, JSON-escaped. */
function encodingsOf(value: string): string[] {
  const forms = new Set([
    value,
    Buffer.from(value).toString('base64'),
    Buffer.from(value).toString('base64url'),
    encodeURIComponent(value),
    new URLSearchParams({ v: value }).toString().slice(2),
    JSON.stringify(value).slice(1, -1),
  ]);
  return [...forms].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

/**
 * Remembers a secret value (and its encodings) so that {@link redactSecrets}
 * blanks it out. `pinned` values (the configured credentials) are kept for
 * the life of the process; others (access tokens, which rotate) only while
 * they are among the last {@link MAX_ROTATING} registered.
 */
export function registerSecret(
  value: string,
  options: { pinned?: boolean; slot?: string } = {},
): void {
  if (value.length < MIN_SECRET_LENGTH) return;
  if (options.slot !== undefined) {
    // A holder's value in use: replaced when it changes, kept however many
    // other holders (accounts) register theirs; the pattern is rebuilt only
    // when the value changes, not each time it is handed out.
    const previous = slots.get(options.slot);
    if (previous === value) return;
    slots.set(options.slot, value);
    // The token it replaces may still echo in an answer in flight: kept among the recent ones.
    if (previous !== undefined) registerSecret(previous);
    patternStale = true;
    return;
  }
  if (options.pinned) {
    if (pinned.has(value)) return;
    pinned.add(value);
  } else {
    if (pinned.has(value)) return;
    // Re-registering moves the value to the newest end; the pattern, which
    // holds every value whatever their order, stays as it is.
    if (rotating.delete(value)) {
      rotating.add(value);
      return;
    }
    rotating.add(value);
    while (rotating.size > MAX_ROTATING) {
      const oldest = rotating.values().next().value as string;
      rotating.delete(oldest);
    }
  }
  patternStale = true;
}

/** How many values the registry holds (pinned and rotating). */
export function registeredSecretCount(): number {
  return pinned.size + rotating.size + slots.size;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function currentPattern(): RegExp | undefined {
  if (patternStale) {
    const forms = [...new Set([...pinned, ...rotating, ...slots.values()])].flatMap(encodingsOf);
    // Longest first, so a value's base64 is not cut short by a shorter secret inside it.
    const unique = [...new Set(forms)].sort((a, b) => b.length - a.length);
    pattern = unique.length > 0 ? new RegExp(unique.map(escapeRegExp).join('|'), 'g') : undefined;
    patternStale = false;
  }
  return pattern;
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
 * `Bearer …`/`Basic …` credential replaced by `[redacted]`. Cheap when the
 * text holds none: one regular-expression scan per pattern.
 */
export function redactSecrets(text: string): string {
  const known = currentPattern();
  let out = known ? text.replace(known, REDACTED) : text;
  out = out.replace(
    CREDENTIAL_SHAPES,
    (_match, scheme?: string, space?: string, field?: string, sep?: string) =>
      scheme !== undefined ? `${scheme}${space}${REDACTED}` : `${field}${sep}${REDACTED}`,
  );
  return out;
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

/**
 * A secret value (client secret, API key, access token) that cannot leak by
 * accident: printing, logging or JSON-encoding it yields `[redacted]`. Only
 * `reveal()` hands out the value, at the one place that must send it. Every
 * Secret registers itself with {@link redactSecrets}, so the value is blanked
 * out of any text hiresync stores or prints, even an API error that echoes it.
 */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
    registerSecret(value, { pinned: true });
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return REDACTED;
  }
  toJSON(): string {
    return REDACTED;
  }
  [inspect.custom](): string {
    return 'Secret([redacted])';
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
