import { describe, expect, it } from 'vitest';
import { columnNameFor } from '../../../src/warehouse/typed-views/column-names.js';

describe('typed view column names', () => {
  it('uses a plain key as it is', () => {
    expect(columnNameFor('candidate_id', new Set())).toBe('candidate_id');
    expect(columnNameFor('name', new Set(['name__1']))).toBe('name');
  });

  it('gives a key that must change a name no plain key can claim', () => {
    // The plain name stays free for the plain key, in this account or another.
    expect(columnNameFor('Name', new Set())).toBe('name__1');
    expect(columnNameFor('first-name', new Set())).toBe('first_name__1');
    expect(columnNameFor('Weird Key', new Set())).toBe('weird_key__1');
    expect(columnNameFor('2nd', new Set())).toBe('k_2nd__1');
    expect(columnNameFor('é', new Set())).toBe('key__1');
    // The view's own columns, and all_accounts' first column, are never a key's.
    expect(columnNameFor('deleted_at', new Set())).toBe('deleted_at__1');
    expect(columnNameFor('id', new Set())).toBe('id__1');
    expect(columnNameFor('account', new Set())).toBe('account__1');
    // A plain key in the reserved form is changed too, so it never meets a changed name.
    expect(columnNameFor('name__1', new Set())).toBe('name__1__1');
    expect(columnNameFor('Weird Key', new Set(['weird_key__1', 'weird_key__2']))).toBe(
      'weird_key__3',
    );
    const long = 'X'.repeat(80);
    expect(Buffer.byteLength(columnNameFor(long, new Set()))).toBeLessThanOrEqual(63);
    expect(Buffer.byteLength(columnNameFor('x'.repeat(64), new Set()))).toBeLessThanOrEqual(63);
  });
});
