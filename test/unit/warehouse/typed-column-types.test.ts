import { describe, expect, it } from 'vitest';
import {
  holdsType,
  type KeyProfile,
  typeOf,
  widen,
} from '../../../src/warehouse/typed-views/column-types.js';

const none = {
  values: 0,
  numbers: 0,
  integers: 0,
  booleans: 0,
  strings: 0,
  timestamps: 0,
  dates: 0,
  structured: 0,
};
const profile = (key: string, counts: Partial<Omit<KeyProfile, 'key'>>): KeyProfile => ({
  key,
  ...none,
  ...counts,
});

describe('typed view column types', () => {
  it('types a key by every value it holds', () => {
    expect(typeOf(profile('n', { values: 3, numbers: 3, integers: 3 }))).toBe('bigint');
    expect(typeOf(profile('n', { values: 3, numbers: 3, integers: 2 }))).toBe('numeric');
    expect(typeOf(profile('b', { values: 2, booleans: 2 }))).toBe('boolean');
    expect(typeOf(profile('seen_at', { values: 2, strings: 2, timestamps: 2 }))).toBe(
      'timestamptz',
    );
    expect(typeOf(profile('start_on', { values: 2, strings: 2, dates: 2 }))).toBe('date');
    expect(typeOf(profile('s', { values: 2, strings: 2 }))).toBe('text');
    expect(typeOf(profile('o', { values: 2, structured: 1, strings: 1 }))).toBe('jsonb');
    expect(typeOf(profile('only_nulls', {}))).toBe('unknown');
  });

  it('keeps an _at key whose values do not all parse as timestamps as text', () => {
    expect(typeOf(profile('seen_at', { values: 3, strings: 3, timestamps: 2 }))).toBe('text');
    expect(typeOf(profile('start_on', { values: 3, strings: 3, dates: 2 }))).toBe('text');
    // A timestamp-looking value in a key that is not an _at key is text.
    expect(typeOf(profile('when', { values: 1, strings: 1, timestamps: 0 }))).toBe('text');
  });

  it('keeps mixed scalars as text', () => {
    expect(typeOf(profile('ref', { values: 3, numbers: 2, integers: 2, strings: 1 }))).toBe('text');
    expect(typeOf(profile('flag', { values: 2, booleans: 1, numbers: 1, integers: 1 }))).toBe(
      'text',
    );
  });

  it('only ever widens a column', () => {
    expect(widen('bigint', 'numeric')).toBe('numeric');
    expect(widen('numeric', 'bigint')).toBe('numeric');
    expect(widen('bigint', 'text')).toBe('text');
    expect(widen('timestamptz', 'text')).toBe('text');
    expect(widen('text', 'jsonb')).toBe('jsonb');
    expect(widen('unknown', 'date')).toBe('date');
    expect(widen('date', 'unknown')).toBe('date');
    expect(widen('boolean', 'boolean')).toBe('boolean');
    expect(widen('boolean', 'bigint')).toBe('text');
  });
});

describe('typed view column types across accounts', () => {
  it('ignores keys that held only nulls', () => {
    expect(widen('unknown', 'numeric')).toBe('numeric');
    expect(widen('date', 'bigint')).toBe('text');
  });
});

describe('a kept column type', () => {
  it('holds a new type only when every value of it shows: text and jsonb anything, numeric bigint', () => {
    expect(holdsType('text', 'numeric')).toBe(true);
    expect(holdsType('text', 'jsonb')).toBe(true);
    expect(holdsType('jsonb', 'bigint')).toBe(true);
    expect(holdsType('numeric', 'bigint')).toBe(true);
    expect(holdsType('bigint', 'bigint')).toBe(true);
    expect(holdsType('bigint', 'numeric')).toBe(false);
    expect(holdsType('boolean', 'text')).toBe(false);
    expect(holdsType('timestamp with time zone', 'text')).toBe(false);
    expect(holdsType('date', 'timestamp with time zone')).toBe(false);
  });
});
