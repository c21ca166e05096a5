import { createHmac } from 'node:crypto';
import { type FieldPolicy, parseFieldPolicy } from '../../src/privacy/field-policy.js';

/** The policy of a HIRESYNC_FIELD_POLICY text; throws on one the configuration would refuse. */
export function policyOf(text: string): FieldPolicy {
  const parsed = parseFieldPolicy(text);
  if ('problem' in parsed) throw new Error(parsed.problem);
  return parsed.policy;
}

/** What a hashed value must be stored as, computed with node:crypto itself (not FieldHasher). */
export function expectedHash(key: Buffer, text: string): string {
  return `hmac-sha256:${createHmac('sha256', key).update(text, 'utf8').digest('hex')}`;
}
