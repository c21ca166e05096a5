import { describe, expect, it } from 'vitest';
import { FieldHasher } from '../../../src/privacy/field-hasher.js';
import { parseFieldPolicy } from '../../../src/privacy/field-policy.js';
import { RecordPolicy } from '../../../src/privacy/police-page.js';
import { type RowPolice, rewriteOf } from '../../../src/warehouse/upkeep/reapply-rows.js';
import { expectedHash } from '../../support/field-policy.js';

const KEY = Buffer.alloc(32, 3);
const hmac = (text: string) => expectedHash(KEY, text);

function policeOf(text: string, resource: string, columns?: RowPolice['columns']): RowPolice {
  const parsed = parseFieldPolicy(text);
  if ('problem' in parsed) throw new Error(parsed.problem);
  const policy = new RecordPolicy(parsed.policy, new FieldHasher(KEY));
  return { record: (r) => policy.record(resource, r, { keepHashed: true }), columns };
}

describe('a stored row under the policy', () => {
  it('keeps ids beyond 2^53 and numerics such as 1.50 digit for digit', () => {
    const text =
      '{"id": 9007199254740993, "pay": 1.50, "big": 123456789012345678901234567890, "email": "a@x"}';
    const rewrite = rewriteOf({ id: '9007199254740993', text }, policeOf('c.email=hash', 'c'));
    expect(rewrite?.text).toBe(
      `{"id":9007199254740993,"pay":1.50,"big":123456789012345678901234567890,"email":"${hmac('a@x')}"}`,
    );
  });

  it('is not rewritten when the policy changes nothing (a key it names is absent, or already policed)', () => {
    const police = policeOf('c.email=hash,c.phone=drop', 'c');
    expect(
      rewriteOf({ id: '1', text: '{"id": 1, "name": "Ada", "n": 1.0}' }, police),
    ).toBeUndefined();
    expect(
      rewriteOf({ id: '1', text: `{"id": 1, "email": "${hmac('a@x')}"}` }, police),
    ).toBeUndefined();
  });

  it('rewrites a rejected record kept as its JSON text as text again, and a string record as a value', () => {
    const police = policeOf('c.email=drop', 'c');
    const kept = '{"id": 1, "email": "a@x", "note": "NUL \\u0000 inside"}';
    const rewrite = rewriteOf({ id: '7', text: JSON.stringify(kept), string: kept }, police);
    expect(rewrite).toMatchObject({ asText: true, text: '{"id":1,"note":"NUL \\u0000 inside"}' });
    const plain = 'not an object 12';
    expect(
      rewriteOf({ id: '8', text: JSON.stringify(plain), string: plain }, police),
    ).toMatchObject({ asText: false, text: JSON.stringify('[withheld by HIRESYNC_FIELD_POLICY]') });
  });

  it("sets a reference table's column from its policed key, and polices a column whose key the record lacks", () => {
    const columns = [
      { column: 'name', keys: ['name'] },
      { column: 'employee_id', keys: ['employee_id'] },
    ];
    const police = policeOf('referrers.name=hash,referrers.employee_id=drop', 'referrers', columns);
    // A referrer of the list has no employee_id: a nested copy's stays in the column.
    const rewrite = rewriteOf(
      { id: '5', text: '{"id": 5, "name": "Ann"}', cells: ['Ann', 'E-5'] },
      police,
    );
    expect(rewrite).toMatchObject({
      text: `{"id":5,"name":"${hmac('Ann')}"}`,
      cells: [hmac('Ann'), null],
    });
    const again = rewriteOf(
      { id: '5', text: rewrite?.text ?? '', cells: rewrite?.cells ?? [] },
      police,
    );
    expect(again).toBeUndefined();
  });

  it("polices a source's public_name column whichever key filled it", () => {
    const columns = [{ column: 'public_name', keys: ['name', 'public_name'] }];
    const police = policeOf('sources.name=hash,sources.public_name=hash', 'sources', columns);
    for (const key of ['name', 'public_name']) {
      const rewrite = rewriteOf(
        { id: '3', text: `{"id": 3, "${key}": "Src"}`, cells: ['Src'] },
        police,
      );
      expect(rewrite?.cells).toEqual([hmac('Src')]);
    }
  });
});
