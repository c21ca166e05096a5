import { describe, expect, it } from 'vitest';
import { CursorCodec } from '../../../src/simulator/cursor-codec.js';
import { readListQuery } from '../../../src/simulator/list-query.js';

const read = (query: string, cursors = new CursorCodec(), account?: string) =>
  readListQuery(new URL(`http://sim.invalid/v3/jobs?${query}`), 'jobs', account, cursors);

describe('the simulator list query', () => {
  it('reads a first page: per_page (default 100), status and updated_at=gte|…', () => {
    expect(read('')).toEqual({
      below: Number.POSITIVE_INFINITY,
      perPage: 100,
      status: undefined,
      updatedSince: undefined,
      inactiveOnly: false,
    });
    expect(read('per_page=500&status=open&updated_at=gte|2024-01-01T00:00:00Z')).toEqual({
      below: Number.POSITIVE_INFINITY,
      perPage: 500,
      status: 'open',
      updatedSince: '2024-01-01T00:00:00Z',
      inactiveOnly: false,
    });
  });

  it('refuses per_page outside 1..500 and an updated_at filter that is not gte|<timestamp>', () => {
    expect(read('per_page=501')).toEqual({
      errors: [{ per_page: 'must be less than or equal to 500' }],
    });
    expect(read('per_page=0')).toEqual({
      errors: [{ per_page: 'must be an integer from 1 to 500' }],
    });
    expect(read('updated_at=2024-01-01')).toEqual({
      errors: [{ updated_at: 'must be gte|<ISO 8601 timestamp>' }],
    });
  });

  it('continues from a cursor, which must come alone and belong to the resource and account', () => {
    const cursors = new CursorCodec();
    const state = { resource: 'jobs', below: 42, perPage: 7, status: 'open', account: 'acct001' };
    const cursor = cursors.encode(state);
    expect(read(`cursor=${cursor}`, cursors, 'acct001')).toEqual({
      below: 42,
      perPage: 7,
      status: 'open',
      updatedSince: undefined,
      inactiveOnly: false,
    });
    expect(read(`cursor=${cursor}`, cursors, undefined)).toEqual({
      errors: ['The cursor is malformed or invalid'],
    });
    expect(read(`cursor=${cursor}&per_page=3`, cursors, 'acct001')).toEqual({
      errors: ['No other query parameters may be provided with a cursor'],
    });
    expect(read(`cursor=${cursor}`, new CursorCodec(), 'acct001')).toEqual({
      errors: ['The cursor is malformed or invalid'],
    });
  });

  it('reads active=false on a first page and carries it through the cursor, with or without an account', () => {
    const cursors = new CursorCodec();
    expect(read('per_page=5&active=false')).toMatchObject({ inactiveOnly: true });
    expect(read('per_page=5&active=true')).toMatchObject({ inactiveOnly: false });
    for (const account of [undefined, 'acct001']) {
      const cursor = cursors.encode({
        resource: 'jobs',
        below: 42,
        perPage: 5,
        account,
        inactiveOnly: true,
      });
      expect(read(`cursor=${cursor}`, cursors, account)).toEqual({
        below: 42,
        perPage: 5,
        status: undefined,
        updatedSince: undefined,
        inactiveOnly: true,
      });
    }
  });
});
