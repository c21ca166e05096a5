import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Random bytes of a connect link's token (256 bits). */
const RANDOM_BYTES = 32;
/** Bytes of the HMAC-SHA256 kept in the token (128 bits). */
const MAC_BYTES = 16;
/** What the MAC covers besides the random part: a token opens nothing else keyed the same. */
const MAC_CONTEXT = 'hiresync connect link v1\n';

const TOKEN_PATTERN = new RegExp(
  `^([A-Za-z0-9_-]{${Math.ceil((RANDOM_BYTES * 4) / 3)}})\\.([A-Za-z0-9_-]{${Math.ceil((MAC_BYTES * 4) / 3)}})$`,
);

function macOf(key: Buffer, random: string): Buffer {
  return createHmac('sha256', key)
    .update(MAC_CONTEXT + random)
    .digest()
    .subarray(0, MAC_BYTES);
}

/**
 * A new connect link token, `<random>.<mac>` (base64url, 66 characters): 32
 * random bytes and the first 16 bytes of their HMAC-SHA256 under `keys[0]`
 * (the first key of HIRESYNC_SECRET_KEY), and the hash the database keeps of
 * it ({@link connectTokenHash}).
 */
export function newConnectToken(keys: readonly Buffer[]): { token: string; hash: string } {
  const key = keys[0];
  if (!key) throw new Error('a connect token needs a key');
  const random = randomBytes(RANDOM_BYTES).toString('base64url');
  const token = `${random}.${macOf(key, random).toString('base64url')}`;
  return { token, hash: connectTokenHash(token) };
}

/**
 * Whether `token` is one hiresync signed with any of `keys` (key rotation:
 * a link made before the keys rotated still opens). Checks the shape, then
 * the MAC in constant time; touches nothing but memory, so a forged token is
 * refused before the database is asked.
 */
export function verifyConnectToken(token: string, keys: readonly Buffer[]): boolean {
  const match = TOKEN_PATTERN.exec(token);
  const random = match?.[1];
  const mac = match?.[2];
  if (random === undefined || mac === undefined) return false;
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== MAC_BYTES || given.toString('base64url') !== mac) return false;
  let valid = false;
  for (const key of keys) if (timingSafeEqual(given, macOf(key, random))) valid = true;
  return valid;
}

/** What hiresync.connect_links keeps of a token, and hiresync.connect_states of a state: lowercase hex SHA-256. */
export function connectTokenHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** A fresh OAuth `state` for an opening of a link: 32 random bytes, base64url. */
export function newConnectState(): { state: string; hash: string } {
  const state = randomBytes(32).toString('base64url');
  return { state, hash: connectTokenHash(state) };
}
