import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  accountNameProblem,
  analyticsSchemaOf,
  DEFAULT_ACCOUNT,
  registeredAccountProblem,
  runKey,
  schemaOf,
} from '../../src/account-name.js';
import { PUBLIC_SCHEMA } from '../../src/warehouse/database.js';

describe('account naming rules', () => {
  it('accepts lower-case names of letters, digits and _ up to 40 characters, starting with a letter', () => {
    expect(accountNameProblem('acme')).toBeUndefined();
    expect(accountNameProblem(`a${'b'.repeat(39)}`)).toBeUndefined();
    expect(accountNameProblem('acme_2')).toBeUndefined();
  });

  it('refuses other shapes and the reserved schema names, saying why', () => {
    expect(accountNameProblem('Acme')).toBe(
      'account name "Acme" must be 1 to 40 lowercase letters, digits or _, starting with a letter',
    );
    expect(accountNameProblem(`a${'b'.repeat(40)}`)).toMatch(/must be 1 to 40/);
    expect(accountNameProblem('2acme')).toMatch(/must be 1 to 40/);
    for (const name of [
      'default',
      'public',
      'hiresync',
      'all_accounts',
      'information_schema',
      'pg_x',
      'analytics',
      'acme_analytics',
    ]) {
      expect(accountNameProblem(name)).toBe(
        `account name ${JSON.stringify(name)} is reserved; choose another`,
      );
    }
  });

  it('explains that default is the environment, not a registered account', () => {
    expect(registeredAccountProblem(DEFAULT_ACCOUNT, 'removed')).toBe(
      "the account default is the environment's credentials (HIRESYNC_CLIENT_ID/HIRESYNC_CLIENT_SECRET or HIRESYNC_API_KEY), not a registered account: it cannot be removed",
    );
    expect(registeredAccountProblem('public', 'removed')).toMatch(/is reserved/);
    expect(registeredAccountProblem('acme', 'removed')).toBeUndefined();
  });

  it("keeps default's tables in the warehouse's public schema and its keys unprefixed", () => {
    expect(schemaOf(DEFAULT_ACCOUNT)).toBe(PUBLIC_SCHEMA);
    expect(schemaOf('acme')).toBe('acme');
    expect(runKey(DEFAULT_ACCOUNT, 'jobs')).toBe('jobs');
    expect(runKey('acme', 'jobs')).toBe('acme:jobs');
  });

  it("puts default's analytics views in schema analytics and NAME's in NAME_analytics, which no account can take", () => {
    expect(analyticsSchemaOf(DEFAULT_ACCOUNT)).toBe('analytics');
    expect(analyticsSchemaOf('acme')).toBe('acme_analytics');
    // Every account's schemas (its own, its analytics) are distinct from every
    // other account's, and from hiresync's and Postgres's.
    const names = ['acme', 'acme_2', 'x', `a${'b'.repeat(39)}`, 'analytic', 'acme_analytic'];
    const accounts = [DEFAULT_ACCOUNT, ...names.filter((n) => accountNameProblem(n) === undefined)];
    const schemas = accounts.flatMap((a) => [schemaOf(a), analyticsSchemaOf(a)]);
    expect(new Set(schemas).size).toBe(schemas.length);
    // No account's analytics schema is a name an account may take.
    for (const account of accounts) {
      expect(accountNameProblem(analyticsSchemaOf(account)), account).toBeDefined();
    }
    expect(accountNameProblem('all_accounts')).toMatch(/reserved/);
    expect(analyticsSchemaOf(`a${'b'.repeat(39)}`).length).toBeLessThanOrEqual(63);
  });

  it('is a leaf: the module imports nothing', () => {
    const text = readFileSync(new URL('../../src/account-name.ts', import.meta.url), 'utf8');
    expect(text).not.toMatch(/\bfrom '/);
  });
});
