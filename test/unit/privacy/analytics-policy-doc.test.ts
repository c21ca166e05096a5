import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FieldHasher } from '../../../src/privacy/field-hasher.js';
import { parseFieldPolicy } from '../../../src/privacy/field-policy.js';
import { RecordPolicy } from '../../../src/privacy/police-page.js';
import { resolvePolicy } from '../../../src/privacy/policy-targets.js';
import { ANALYTICS_RESOURCES, catalogFor, RESOURCE_NAMES } from '../../../src/resources/index.js';

/** The policy line docs/privacy.md recommends for the analytics resources. */
function documentedLine(): string {
  const doc = readFileSync(new URL('../../../docs/privacy.md', import.meta.url), 'utf8');
  const section = doc.split('### Analytics resources: personal data')[1]?.split('\n### ')[0] ?? '';
  const line = /^HIRESYNC_FIELD_POLICY=(.+)$/m.exec(section)?.[1];
  if (!line) throw new Error('no HIRESYNC_FIELD_POLICY line in the section');
  return line;
}

const catalog = catalogFor([...RESOURCE_NAMES, ...ANALYTICS_RESOURCES.keys()]);

describe("docs/privacy.md's policy for the analytics resources", () => {
  it('is accepted by the field-policy parser and by the resources it names, and drops what it says', () => {
    const parsed = parseFieldPolicy(documentedLine());
    if ('problem' in parsed) throw new Error(parsed.problem);
    expect(parsed.policy.rules.every((r) => r.action === 'drop')).toBe(true);
    const resolved = resolvePolicy(new RecordPolicy(parsed.policy, undefined), catalog);
    if ('problems' in resolved) throw new Error(resolved.problems.join('; '));
    const answer = { id: 6, application_id: 1, free_form_text: 'written by the candidate' };
    expect(resolved.policy.record('demographic_answers', answer)).toEqual({
      id: 6,
      application_id: 1,
    });
    const user = { id: 1, name: 'Ada', primary_email: 'a@x', emails: ['a@x'], employee_id: '7' };
    const policed = resolved.policy.record('users', user);
    expect(policed).toEqual({ id: 1, name: 'Ada' });
    for (const [name, record] of [
      ['demographic_answers', answer],
      ['users', policed],
    ] as const) {
      expect(ANALYTICS_RESOURCES.get(name)?.validate(record)).toBeUndefined();
    }
  });

  it('may add referrers.name=hash, as the section says, and would refuse hashing a typed eeoc answer', () => {
    const hasher = new FieldHasher(Buffer.alloc(32, 3));
    const withNames = parseFieldPolicy(`${documentedLine()},referrers.name=hash`);
    if ('problem' in withNames) throw new Error(withNames.problem);
    expect('policy' in resolvePolicy(new RecordPolicy(withNames.policy, hasher), catalog)).toBe(
      true,
    );
    const eeoc = parseFieldPolicy('eeoc.gender=hash');
    if ('problem' in eeoc) throw new Error(eeoc.problem);
    expect(resolvePolicy(new RecordPolicy(eeoc.policy, hasher), catalog)).toMatchObject({
      problems: [expect.stringContaining('eeoc stores gender as a typed value')],
    });
  });
});
