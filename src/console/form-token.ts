import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a rendered console page's form may be sent: an hour. */
export const FORM_TOKEN_TTL_MS = 60 * 60_000;

/** How far ahead of this process's clock another worker's token may be dated (clocks of hosts differ). */
const CLOCK_LEEWAY_MS = 5 * 60_000;

/** What a form's token is found to be. */
export type FormTokenCheck = 'ok' | 'missing' | 'forged' | 'expired';

/**
 * The keys that sign the console's form tokens, the first signs, any checks:
 * one per key of HIRESYNC_SECRET_KEY (so a token made by one worker is taken
 * by every other behind the same URL, keys being rolled included), each
 * derived with the console password (a new password voids the open forms).
 * Without secret keys, one key derived from the password alone.
 */
export function formTokenKeys(password: string, secretKeys: readonly Buffer[]): Buffer[] {
  const roots = secretKeys.length > 0 ? secretKeys : [Buffer.from('hiresync console')];
  return roots.map((root) =>
    createHmac('sha256', root).update('hiresync console form token\0').update(password).digest(),
  );
}

function signature(key: Buffer, issuedAt: string, nonce: string): Buffer {
  return createHmac('sha256', key).update(`console-form:${issuedAt}.${nonce}`).digest();
}

/**
 * A token for the forms of a page rendered at `nowMs`: its time, a random
 * nonce (no two renders share a token, so each can be spent once: see
 * serve-console's guard), and an HMAC of both.
 */
export function createFormToken(keys: readonly Buffer[], nowMs: number): string {
  const [key] = keys;
  if (!key) throw new Error('createFormToken needs a key');
  const issuedAt = Math.floor(nowMs).toString(36);
  const nonce = randomBytes(12).toString('base64url');
  return `v2.${issuedAt}.${nonce}.${signature(key, issuedAt, nonce).toString('base64url')}`;
}

/**
 * Whether `token` (the form's field, as sent) was made by {@link createFormToken}
 * under one of `keys` within {@link FORM_TOKEN_TTL_MS} of `nowMs`, spelled
 * as it made it (so that spending it once spends it). The HMAC is compared
 * in constant time.
 */
export function checkFormToken(
  token: string | undefined,
  keys: readonly Buffer[],
  nowMs: number,
): FormTokenCheck {
  if (token === undefined || token === '') return 'missing';
  const match = /^v2\.([0-9a-z]{1,12})\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match?.[1] || !match[2] || !match[3]) return 'forged';
  const [, issuedAt, nonce] = match;
  const given = Buffer.from(match[3], 'base64url');
  // One spelling per token: base64url leaves 2 bits of the last character unused, so
  // 4 spellings decode to the same signature, and a token is spent by its spelling.
  if (given.toString('base64url') !== match[3]) return 'forged';
  const signed = keys.some((key) => timingSafeEqual(signature(key, issuedAt, nonce), given));
  if (!signed) return 'forged';
  const age = nowMs - Number.parseInt(issuedAt, 36);
  return age > FORM_TOKEN_TTL_MS || age < -CLOCK_LEEWAY_MS ? 'expired' : 'ok';
}
