import { describe, expect, it } from 'vitest';
import { declaredColumnsProblem, readsAs } from '../../../src/resources/declared-columns.js';
import { jobPosts } from '../../../src/resources/job-posts.js';
import { jobs } from '../../../src/resources/jobs.js';

describe('declared columns', () => {
  it.each([
    ['bigint', 42, true],
    ['bigint', 2.5, false],
    ['bigint', '42', false],
    ['numeric', 2.5, true],
    ['boolean', 'true', false],
    ['date', '2024-02-29', true],
    ['date', '2023-02-29', false],
    ['date', '2024-02-01T00:00:00Z', false],
    ['timestamptz', '2024-02-01T10:00:00Z', true],
    ['timestamptz', '2024-02-01T10:00:00', true],
    ['timestamptz', 'soon', false],
    ['text', { a: 1 }, true],
    ['jsonb', 'anything', true],
    ['bigint', null, true],
    ['bigint', `hmac-sha256:${'a'.repeat(64)}`, true],
  ] as const)('read %s from %j: %s', (type, value, reads) => {
    expect(readsAs(value, type)).toBe(reads);
  });

  it('name each declared key whose value its column cannot read', () => {
    expect(
      declaredColumnsProblem(
        { job_id: 'abc', live: 1, title: 7 },
        {
          job_id: 'bigint',
          live: 'boolean',
          title: 'text',
        },
      ),
    ).toBe(
      'job_id is not a bigint as its declared column says: got the string "abc"; live is not a boolean as its declared column says: got number 1',
    );
  });

  it('reject the simulator’s malformed job post, and accept good ones', () => {
    const malformed = { id: 7, job_id: 'abc', token: 'bad-job-id' };
    expect(jobPosts.validate(malformed)).toMatch(/^job_id is not a bigint/);
    expect(jobs.validate({ id: 7, department_id: 'Sales' })).toMatch(
      /^department_id is not a bigint/,
    );
    expect(jobPosts.validate({ id: 8, job_id: 9, live: true })).toBeUndefined();
    expect(jobs.validate({ id: 8, name: 'Engineer', department_id: null })).toBeUndefined();
  });
});
