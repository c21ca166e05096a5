import { describe, expect, it } from 'vitest';
import { CursorCodec } from '../../../src/simulator/cursor-codec.js';
import { epochMicros, withinDates } from '../../../src/simulator/date-bounds.js';
import { readListQuery } from '../../../src/simulator/list-query.js';

const read = (query: string, cursors = new CursorCodec(), account?: string) =>
  readListQuery(new URL(`http://sim.invalid/v3/jobs?${query}`), 'jobs', account, cursors);

describe('the simulator list query', () => {
  it('reads a first page: per_page (default 100), status and updated_at=gte|…', () => {
    expect(read('')).toEqual({
      below: Number.POSITIVE_INFINITY,
      perPage: 100,
      status: undefined,
      dates: [],
      inactiveOnly: false,
    });
    expect(read('per_page=500&status=open&updated_at=gte|2024-01-01T00:00:00Z')).toEqual({
      below: Number.POSITIVE_INFINITY,
      perPage: 500,
      status: 'open',
      dates: [{ field: 'updated_at', op: 'gte', at: '2024-01-01T00:00:00Z' }],
      inactiveOnly: false,
    });
  });

  it('reads pipe-delimited date filters: gte, lte, gt and lt, combined, on updated_at and created_at', () => {
    expect(
      read(
        'updated_at=gte|2024-01-01T00:00:00Z|lte|2024-02-01T00:00:00Z&created_at=gt|2023-06-01T00:00:00.5Z|lt|2024-01-02T00:00:00Z',
      ),
    ).toMatchObject({
      dates: [
        { field: 'updated_at', op: 'gte', at: '2024-01-01T00:00:00Z' },
        { field: 'updated_at', op: 'lte', at: '2024-02-01T00:00:00Z' },
        { field: 'created_at', op: 'gt', at: '2023-06-01T00:00:00.5Z' },
        { field: 'created_at', op: 'lt', at: '2024-01-02T00:00:00Z' },
      ],
    });
  });

  it('compares times to the microsecond, so that bounds within one millisecond still hold', () => {
    expect(epochMicros('2024-01-01T00:00:00.000500Z') - epochMicros('2024-01-01T00:00:00Z')).toBe(
      500,
    );
    const times = { updated_at: '2024-01-01T00:00:00.000500Z', created_at: '2023-01-01T00:00:00Z' };
    expect(
      withinDates(times, [{ field: 'updated_at', op: 'gt', at: '2024-01-01T00:00:00.000Z' }]),
    ).toBe(true);
    expect(
      withinDates(times, [{ field: 'updated_at', op: 'lt', at: '2024-01-01T00:00:00.000400Z' }]),
    ).toBe(false);
    expect(
      withinDates(times, [{ field: 'updated_at', op: 'lte', at: '2024-01-01T00:00:00.000500Z' }]),
    ).toBe(true);
    expect(withinDates(times, [])).toBe(true);
  });

  it('refuses per_page outside 1..500 and a date filter that is not OP|<timestamp>[|OP|<timestamp>…]', () => {
    expect(read('per_page=501')).toEqual({
      errors: [{ per_page: 'must be less than or equal to 500' }],
    });
    expect(read('per_page=0')).toEqual({
      errors: [{ per_page: 'must be an integer from 1 to 500' }],
    });
    const refusal = {
      errors: [
        {
          updated_at:
            'must be OP|<ISO 8601 timestamp>, OP one of gte, lte, gt, lt, and may be repeated (gte|A|lte|B)',
        },
      ],
    };
    expect(read('updated_at=2024-01-01')).toEqual(refusal);
    expect(read('updated_at=gte|2024-01-01|lte')).toEqual(refusal);
    expect(read('updated_at=since|2024-01-01')).toEqual(refusal);
    expect(read('created_at=gte|soon')).toMatchObject({ errors: [{ created_at: /^must be OP/ }] });
  });

  it('continues from a cursor, which must come alone and belong to the resource and account', () => {
    const cursors = new CursorCodec();
    const state = { resource: 'jobs', below: 42, perPage: 7, status: 'open', account: 'acct001' };
    const cursor = cursors.encode(state);
    expect(read(`cursor=${cursor}`, cursors, 'acct001')).toEqual({
      below: 42,
      perPage: 7,
      status: 'open',
      dates: [],
      inactiveOnly: false,
    });
    const dates = [{ field: 'created_at' as const, op: 'lt' as const, at: '2024-01-01T00:00:00Z' }];
    expect(read(`cursor=${cursors.encode({ ...state, dates })}`, cursors, 'acct001')).toMatchObject(
      {
        dates,
      },
    );
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
        dates: [],
        inactiveOnly: true,
      });
    }
  });
});
