/**
 * The naming rules of accounts (../shared/interface.md, "Accounts"): what a
 * registered account may be called, the schema of its tables and the name of
 * its keys and locks. A leaf: config, the commands, the accounts layer, the
 * warehouse and the queue all read these rules, so it imports nothing of
 * hiresync's.
 */

/** The account of the environment's credentials; its tables stay in schema `public`. */
export const DEFAULT_ACCOUNT = 'default';

/** Why `default` cannot run when the environment sets no credentials. */
export const NO_DEFAULT_ACCOUNT =
  "there is no account default: the environment sets no credentials (HIRESYNC_CLIENT_ID and HIRESYNC_CLIENT_SECRET, or HIRESYNC_API_KEY); name a registered account (see 'hiresync accounts list')";

/** The schema of the account default's analytics views. */
export const ANALYTICS_SCHEMA = 'analytics';

/** What an account NAME's analytics schema is called after its name: `NAME_analytics`. */
const ANALYTICS_SUFFIX = `_${ANALYTICS_SCHEMA}`;

/** What an account name must look like. */
export const ACCOUNT_NAME = /^[a-z][a-z0-9_]{0,39}$/;

/** Names an account may not take: they are schemas of Postgres or of hiresync. */
const RESERVED = new Set([
  'default',
  'public',
  'hiresync',
  'all_accounts',
  'information_schema',
  ANALYTICS_SCHEMA,
]);

/** Why `name` cannot name a registered account, or undefined when it can. */
export function accountNameProblem(name: string): string | undefined {
  if (!ACCOUNT_NAME.test(name)) {
    return `account name ${JSON.stringify(name)} must be 1 to 40 lowercase letters, digits or _, starting with a letter`;
  }
  // A name ending in _analytics would be another account's analytics schema
  // (account x_analytics against x's): no two accounts' schemas may meet.
  if (RESERVED.has(name) || name.startsWith('pg_') || name.endsWith(ANALYTICS_SUFFIX)) {
    return `account name ${JSON.stringify(name)} is reserved; choose another`;
  }
  return undefined;
}

/**
 * Why `name` cannot name the registered account a command would leave
 * `action` (e.g. `removed`), or undefined when it can. `default`, the
 * environment's account, gets its own explanation: its credentials are the
 * environment's, not a row that the command could change.
 */
export function registeredAccountProblem(name: string, action: string): string | undefined {
  if (name === DEFAULT_ACCOUNT) {
    return `the account default is the environment's credentials (HIRESYNC_CLIENT_ID/HIRESYNC_CLIENT_SECRET or HIRESYNC_API_KEY), not a registered account: it cannot be ${action}`;
  }
  return accountNameProblem(name);
}

/**
 * The Postgres schema holding an account's tables: `public` (the warehouse's
 * PUBLIC_SCHEMA) for `default`, else the account's name.
 */
export function schemaOf(account: string): string {
  return account === DEFAULT_ACCOUNT ? 'public' : account;
}

/**
 * The Postgres schema of an account's analytics views: `analytics` for
 * `default`, else `NAME_analytics`. Never an account's schema: names ending in
 * `_analytics`, and `analytics`, are reserved (see {@link accountNameProblem}).
 */
export function analyticsSchemaOf(account: string): string {
  return account === DEFAULT_ACCOUNT ? ANALYTICS_SCHEMA : `${account}${ANALYTICS_SUFFIX}`;
}

/** The account whose schema is `schema`: `default` for `public`, else the schema's name. */
export function accountOfSchema(schema: string): string {
  return schema === 'public' ? DEFAULT_ACCOUNT : schema;
}

/**
 * The name of one (account, resource) in keys and locks: the resource alone for
 * `default` (the keys a single-account deployment always had, so an upgrade
 * resumes its checkpoints), else `account:resource`. Neither part holds `:`.
 */
export function runKey(account: string, resource: string): string {
  return account === DEFAULT_ACCOUNT ? resource : `${account}:${resource}`;
}
