import { createHmac, timingSafeEqual } from 'node:crypto';

/** The length of an HMAC-SHA256 digest, in bytes. */
const DIGEST_BYTES = 32;

/**
 * The digest a `Signature` header carries: `sha256 <hex>` (the algorithm, a
 * space, 64 hex digits; either case), read into its 32 bytes; undefined for
 * a missing or malformed header, or another algorithm.
 */
export function signatureDigest(header: string | string[] | undefined): Buffer | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^sha256\s+([0-9a-fA-F]{64})$/.exec(header.trim());
  return match?.[1] === undefined ? undefined : Buffer.from(match[1], 'hex');
}

/**
 * Whether `header` is the vendor's signature of `body` (the raw bytes as
 * received, never re-encoded) with `secret`: HMAC-SHA256, compared in
 * constant time (timingSafeEqual over two 32-byte digests), so the time
 * taken says nothing of how many bytes matched.
 */
export function verifySignature(
  body: Buffer,
  header: string | string[] | undefined,
  secret: string,
): boolean {
  const expected = createHmac('sha256', secret).update(body).digest();
  const given = signatureDigest(header);
  // A malformed header is compared with a digest of the same length all the
  // same, so a missing header and a wrong one take the same time.
  return timingSafeEqual(given ?? Buffer.alloc(DIGEST_BYTES), expected) && given !== undefined;
}
