import { describe, expect, it } from 'vitest';
import { FieldHasher, isStoredHash } from '../../../src/privacy/field-hasher.js';
import { WITHHELD } from '../../../src/privacy/field-policy.js';
import { RecordPolicy } from '../../../src/privacy/police-page.js';
import { storedRecordPolicy, withMirroredReferences } from '../../../src/privacy/policy-targets.js';
import { expectedHash, policyOf } from '../../support/field-policy.js';

const KEY = Buffer.alloc(32, 9);
const hasher = new FieldHasher(KEY);
const hmac = (text: string) => expectedHash(KEY, text);

function reapply(text: string, resource: string, record: unknown): unknown {
  return new RecordPolicy(policyOf(text), hasher).record(resource, structuredClone(record), {
    keepHashed: true,
  });
}

describe('reapplying the policy to stored records', () => {
  it('tells a stored hash by its exact form: the prefix and 64 lowercase hex digits', () => {
    expect(isStoredHash(hmac('ada@example.com'))).toBe(true);
    expect(isStoredHash(hmac('x').toUpperCase())).toBe(false);
    expect(isStoredHash(`${hmac('x')}0`)).toBe(false);
    expect(isStoredHash(hmac('x').slice(0, -1))).toBe(false);
    expect(isStoredHash(`hmac-sha256:${'g'.repeat(64)}`)).toBe(false);
    expect(isStoredHash(42)).toBe(false);
  });

  it('leaves a value already hashed as it is, so that applying the policy twice changes nothing', () => {
    const stored = { id: 1, email: 'ada@example.com', emails: [{ value: 'a@example.com' }] };
    const once = reapply('c.email=hash,c.emails.value=hash', 'c', stored);
    expect(once).toEqual({
      id: 1,
      email: hmac('ada@example.com'),
      emails: [{ value: hmac('a@example.com') }],
    });
    expect(reapply('c.email=hash,c.emails.value=hash', 'c', once)).toEqual(once);
  });

  it('hashes a value of that form when a page from the API carries it (a run hashes whatever it is served)', () => {
    const served = { id: 1, email: hmac('someone else') };
    expect(new RecordPolicy(policyOf('c.email=hash'), hasher).record('c', { ...served })).toEqual({
      id: 1,
      email: hmac(hmac('someone else')),
    });
  });

  it('drops a value hashed under an earlier policy when the policy now drops it', () => {
    expect(reapply('c.email=drop', 'c', { id: 1, email: hmac('ada@example.com') })).toEqual({
      id: 1,
    });
  });

  it('keeps a record withheld whole as it is, and hashes a string record once', () => {
    expect(reapply('c.email=hash', 'c', WITHHELD)).toBe(WITHHELD);
    const once = reapply('c.email=hash', 'c', 'Ada ada@example.com');
    expect(once).toBe(hmac('Ada ada@example.com'));
    expect(reapply('c.email=hash', 'c', once)).toBe(once);
  });
});

describe('what a reference table holds, policed', () => {
  it("polices a source by its list's rules and its nested copies' (name there is public_name)", () => {
    const resolved = withMirroredReferences(policyOf('sources.name=hash,referrers.name=drop'));
    if ('problem' in resolved) throw new Error(resolved.problem);
    expect(storedRecordPolicy(resolved.policy, 'sources').describe('sources')).toBe(
      'name=hash,public_name=hash',
    );
    expect(storedRecordPolicy(resolved.policy, 'referrers').describe('referrers')).toBe(
      'name=drop',
    );
    expect(storedRecordPolicy(resolved.policy, 'tracking_links').describe('tracking_links')).toBe(
      'credited_to.name=drop,source.public_name=hash',
    );
  });

  it("leaves out a nested copy's id rule: a copy without its id is never stored", () => {
    const policy = policyOf(
      'tracking_links.credited_to.id=drop,tracking_links.credited_to.name=hash',
    );
    const resolved = withMirroredReferences(policy);
    if ('problem' in resolved) throw new Error(resolved.problem);
    expect(storedRecordPolicy(resolved.policy, 'referrers').describe('referrers')).toBe(
      'name=hash',
    );
  });
});
