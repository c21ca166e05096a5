import { describe, expect, it } from 'vitest';
import { carriedId, recordTexts, topLevelId } from '../../../src/warehouse/pages/record-texts.js';

describe('recordTexts', () => {
  it('cuts each record exactly as sent: big ids, decimals, escapes and nesting kept', () => {
    const body = ' [ {"id": 9007199254740993, "x": 1.0} ,{"s": "a\\"]},[{"}, [1, [2]], "t", null ]';
    expect(recordTexts(body)).toEqual([
      '{"id": 9007199254740993, "x": 1.0}',
      '{"s": "a\\"]},[{"}',
      '[1, [2]]',
      '"t"',
      'null',
    ]);
  });

  it('reads the array under a records key, the last one when the key repeats', () => {
    expect(recordTexts('{"meta": {"data": [0]}, "data": [{"id": 1}]}', 'data')).toEqual([
      '{"id": 1}',
    ]);
    expect(recordTexts('{"data": [1], "data": [2, 3]}', 'data')).toEqual(['2', '3']);
    expect(recordTexts('[]')).toEqual([]);
  });

  it('scans a record nested 20,000 levels deep without recursion', () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    expect(recordTexts(`[${deep}, 1]`)).toEqual([deep, '1']);
  });
});

describe('topLevelId', () => {
  it('reads an integral top-level id as bigint text, ignoring nested ids', () => {
    expect(topLevelId('{"job": {"id": 5}, "id": 9007199254740993}')).toBe('9007199254740993');
    expect(topLevelId('{"id": 10.0, "t": "nul \\u0000"}')).toBe('10');
  });

  it('gives nothing for ids that are not integral numbers in bigint range', () => {
    for (const text of [
      '{"id": "7"}',
      '{"id": 1.5}',
      '{"id": 1e3}',
      '{"x": 1}',
      '[1]',
      '{"id": 9223372036854775808}',
    ]) {
      expect(topLevelId(text), text).toBeUndefined();
    }
  });
});

describe('carriedId', () => {
  it('reads the id an erasure looks for: an integral number in any form, or a string of digits', () => {
    expect(carriedId('{"id": 9007199254740993, "t": "\\u0000"}')).toBe('9007199254740993');
    expect(carriedId('{"id": "123", "t": "\\u0000"}')).toBe('123');
    expect(carriedId('{"id": " 0123 "}')).toBe('123');
    expect(carriedId('{"id": 1.23e2}')).toBe('123');
    expect(carriedId('{"id": 1230E-1}')).toBe('123');
    expect(carriedId('{"id": 10.0}')).toBe('10');
    expect(carriedId('{"id": 0e99999}')).toBe('0');
  });

  it('gives nothing for an id that is no integer within bigint', () => {
    for (const text of [
      '{"id": 1.5}',
      '{"id": 15e-1}',
      '{"id": "12a"}',
      '{"id": "1.0"}',
      '{"id": 1e19}',
      '{"id": "9223372036854775808"}',
      '{"id": 1e99999}',
      '{"job": {"id": 5}}',
      '"text"',
    ]) {
      expect(carriedId(text), text).toBeUndefined();
    }
  });
});
