import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { FieldHasher } from '../../../src/privacy/field-hasher.js';
import { parseFieldPolicy, WITHHELD } from '../../../src/privacy/field-policy.js';
import { policePage, RecordPolicy } from '../../../src/privacy/police-page.js';
import { expectedHash, policyOf } from '../../support/field-policy.js';

const KEY = Buffer.alloc(32, 7);
const hasher = new FieldHasher(KEY);
const hmac = (text: string) => expectedHash(KEY, text);

function problemOf(text: string): string {
  const parsed = parseFieldPolicy(text);
  return 'problem' in parsed ? parsed.problem : '';
}

function police(text: string, resource: string, record: unknown): unknown {
  return new RecordPolicy(policyOf(text), hasher).record(resource, structuredClone(record));
}

describe('HIRESYNC_FIELD_POLICY', () => {
  it('reads RESOURCE.KEY=ACTION items, top-level and dotted, per resource', () => {
    const policy = policyOf(
      ' candidates.emails=hash , candidates.addresses.street=drop,jobs.notes=drop',
    );
    expect(policy.resources).toEqual(['candidates', 'jobs']);
    expect(policy.describe('candidates')).toBe('addresses.street=drop,emails=hash');
    expect(policy.hashes).toBe(true);
    expect(policyOf('jobs.notes=drop').hashes).toBe(false);
  });

  it.each([
    ['jobs.notes=blur', 'item "jobs.notes=blur" has the action "blur": use drop or hash'],
    ['jobs=drop', 'names no key'],
    ['jobs.notes', 'is not RESOURCE.KEY=ACTION'],
    ['jobs..notes=drop', 'has an empty key'],
    ['jobs.id=hash', "names id, the record's key"],
    ['jobs.notes=drop,jobs.notes=hash', 'jobs.notes is given both drop and hash'],
    ['jobs.owner=drop,jobs.owner.email=hash', 'jobs.owner already covers everything under it'],
  ])('refuses %s, naming the item and what is wrong', (text, message) => {
    expect(problemOf(text)).toContain(message);
  });

  it('drops and hashes top-level keys, keeping every other key and null as null', () => {
    const record = { id: 1, name: 'Ada', email: 'ada@example.com', phone: '555', note: null };
    expect(police('c.email=hash,c.phone=drop,c.note=hash', 'c', record)).toEqual({
      id: 1,
      name: 'Ada',
      email: hmac('ada@example.com'),
      note: null,
    });
  });

  it('hashes a value that is not a string as its JSON text, the same in every account and run', () => {
    const record = { id: 1, age: 42, tags: ['a', 'b'], ok: true };
    expect(police('c.age=hash,c.tags=hash,c.ok=hash', 'c', record)).toEqual({
      id: 1,
      age: hmac('42'),
      tags: hmac('["a","b"]'),
      ok: hmac('true'),
    });
    expect(new FieldHasher(Buffer.from(KEY)).hash('x')).toBe(hasher.hash('x'));
  });

  it('follows a dotted path into nested objects and into each object of an array', () => {
    const record = {
      id: 1,
      owner: { name: 'Grace', email: 'g@example.com' },
      emails: [{ value: 'a@example.com', type: 'work' }, null, { type: 'home' }],
    };
    expect(police('c.owner.email=drop,c.emails.value=hash', 'c', record)).toEqual({
      id: 1,
      owner: { name: 'Grace' },
      emails: [{ value: hmac('a@example.com'), type: 'work' }, null, { type: 'home' }],
    });
  });

  it('gives the action to a value of another shape where the path expected objects, so none slips through', () => {
    const record = {
      id: 1,
      owner: 'Grace <g@example.com>',
      emails: ['a@example.com', { value: 'b' }],
    };
    expect(police('c.owner.email=hash,c.emails.value=drop', 'c', record)).toEqual({
      id: 1,
      owner: hmac('Grace <g@example.com>'),
    });
  });

  it('withholds a record that is not an object when a path drops, and hashes it when all hash', () => {
    expect(police('c.email=drop,c.name=hash', 'c', 'Ada ada@example.com')).toBe(WITHHELD);
    expect(police('c.email=hash', 'c', 'Ada ada@example.com')).toBe(hmac('Ada ada@example.com'));
    expect(police('c.email=drop', 'c', null)).toBeNull();
  });

  it('leaves records of resources it does not name as they are', () => {
    const record = { id: 1, email: 'ada@example.com' };
    expect(police('c.email=drop', 'jobs', record)).toEqual(record);
  });

  it('never prints its key', () => {
    expect(String(hasher)).toBe('[redacted]');
    expect(JSON.stringify({ hasher })).toBe('{"hasher":"[redacted]"}');
    expect(inspect(hasher)).not.toContain('07070707');
  });
});

describe('a page under the field policy', () => {
  const tree = policyOf('c.email=drop,c.name=hash').treeOf('c');
  if (!tree) throw new Error('no tree');

  it('rewrites the body with nothing of a dropped or hashed value in it, numbers as sent', () => {
    const body =
      '[{"id":9223372036854775807,"email":"ada@example.com","name":"Ada","score":1.0,"big":2e3,"at":"2026-01-01T00:00:00.123456Z"}]';
    const page = policePage(body, undefined, tree, hasher.hash);
    expect(page.body).not.toContain('ada@example.com');
    expect(page.body).not.toContain('"Ada"');
    expect(page.body).toBe(
      `[{"id":9223372036854775807,"name":"${hmac('Ada')}","score":1.0,"big":2e3,"at":"2026-01-01T00:00:00.123456Z"}]`,
    );
    expect(page.records).toEqual([
      {
        // JavaScript reads the id as the nearest double; the body keeps its digits.
        id: 2 ** 63,
        name: hmac('Ada'),
        score: 1,
        big: 2000,
        at: '2026-01-01T00:00:00.123456Z',
      },
    ]);
  });

  it('polices the records under HIRESYNC_RECORDS_KEY and keeps the rest of the body', () => {
    const body = '{"meta":{"total":1},"items":[{"id":1,"email":"x@example.com"}]}';
    const page = policePage(body, 'items', tree, hasher.hash);
    expect(page.body).toBe('{"meta":{"total":1},"items":[{"id":1}]}');
    expect(page.records).toEqual([{ id: 1 }]);
  });

  it('keeps escapes JSON reads as the same text (\\u0000 and lone surrogates reach Postgres as sent)', () => {
    const body = '[{"id":1,"title":"a\\u0000b\\ud800","email":"é"}]';
    const page = policePage(body, undefined, tree, hasher.hash);
    expect(JSON.parse(page.body)).toEqual([{ id: 1, title: 'a\u0000b\ud800' }]);
    expect(page.body).toContain('\\u0000');
    expect(page.body).toContain('\\ud800');
  });
});
