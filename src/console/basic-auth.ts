import { createHash, timingSafeEqual } from 'node:crypto';

/** The one user name of the console's HTTP Basic login. */
export const CONSOLE_USER = 'hiresync';

/** The `WWW-Authenticate` header of an answer 401: the browser asks for the user and password. */
export const CONSOLE_CHALLENGE = 'Basic realm="hiresync console", charset="UTF-8"';

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * Whether an `Authorization` header logs in to the console: `Basic` with user
 * {@link CONSOLE_USER} and `password`. Both are compared in constant time
 * (over SHA-256 digests, so neither the password's length nor its first
 * differing character shows in the time taken).
 */
export function isConsoleLogin(authorization: string | undefined, password: string): boolean {
  const match = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(authorization ?? '');
  if (!match?.[1]) return false;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return false;
  const userOk = timingSafeEqual(digest(decoded.slice(0, colon)), digest(CONSOLE_USER));
  const passwordOk = timingSafeEqual(digest(decoded.slice(colon + 1)), digest(password));
  return userOk && passwordOk;
}
