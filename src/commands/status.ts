import { Redis } from 'ioredis';
import { DEFAULT_ACCOUNT } from '../account-name.js';
import { AccountSettingsStore } from '../accounts/account-settings-store.js';
import { AccountStore } from '../accounts/account-store.js';
import { defaultAuthModeOf, loadStatusConfig } from '../config.js';
import { coerceError, describeWait, HiresyncError } from '../errors.js';
import { checkConnections } from '../preflight.js';
import { redactSecrets } from '../secret.js';
import {
  defaultAccountShown,
  type ResourceStatus,
  readStatus,
  readTypedViewBlocks,
} from '../status.js';
import { isNotPermitted, scopeOfRun } from '../sync/not-permitted.js';
import { createDatabase } from '../warehouse/database.js';
import { parseAccounts } from './account-options.js';
import { reauthorizationNote } from './accounts/list.js';
import { defineCommand, EXIT } from './command.js';
import { formatTable } from './format-table.js';
import type { OptionTable } from './options.js';

/** Options of `hiresync status`. */
export const options = {
  account: {
    type: 'string',
    value: 'NAME',
    multiple: true,
    description:
      'default (when it exists), or a registered account; repeat, or separate with commas (default: every account)',
  },
} as const satisfies OptionTable;

/**
 * The line saying that the API's clock was further from the worker's than
 * HIRESYNC_UPDATED_LOOKBACK at the first response of the resource's last run
 * that read one (beyond the `Date` header's one-second resolution), or
 * undefined.
 */
export function clockSkewNote(
  status: ResourceStatus,
  lookbackMs: number,
  withAccount: boolean,
): string | undefined {
  const run = [status.lastRun, status.lastSuccess].find((r) => r?.api_clock_skew_ms != null);
  if (!run) return undefined;
  const skewMs = Number(run.api_clock_skew_ms);
  if (Math.abs(skewMs) <= lookbackMs + 1000) return undefined;
  const where = withAccount ? `${status.account}/${status.resource}` : status.resource;
  return (
    `${where}: the API's clock was ${describeWait(Math.abs(skewMs))} ${skewMs < 0 ? 'behind' : 'ahead of'} this worker's ` +
    `at the first response of run ${run.id}, more than HIRESYNC_UPDATED_LOOKBACK (${describeWait(lookbackMs)}); ` +
    "the updated filter starts from the API's clock, but check the worker's time (NTP)"
  );
}

/**
 * What status says below the table of resources whose last run was refused
 * 403 (not permitted): per account, when every resource it ran was refused,
 * that its authorizing user is most likely not a site administrator; else,
 * per resource, the scope to ask for. One 403 cannot tell the two apart.
 */
export function notPermittedNotes(
  statuses: readonly ResourceStatus[],
  withAccount: boolean,
): string[] {
  const notes: string[] = [];
  const accounts = [...new Set(statuses.map((s) => s.account))];
  for (const account of accounts) {
    const ran = statuses.filter((s) => s.account === account && s.lastRun !== undefined);
    const refused = ran.filter((s) => isNotPermitted(s.lastRun));
    if (refused.length === 0) continue;
    const scopes = refused.map((s) => scopeOfRun(s.resource, s.lastRun?.error ?? null));
    if (refused.length === ran.length && ran.length > 1) {
      notes.push(
        `${withAccount ? `account ${account}: ` : ''}every resource answered 403: the authorizing user is most likely not a site administrator ` +
          `(or the credential holds none of the scopes ${scopes.join(', ')}); scheduled incremental runs wait for the next full run`,
      );
      continue;
    }
    for (const [i, s] of refused.entries()) {
      const where = withAccount ? `${account}/${s.resource}` : s.resource;
      notes.push(
        `${where}: not permitted: ask for scope ${scopes[i]} (a partner app: through the API vendor's partner support, then the customer authorizes again), ` +
          'or, if every resource answers 403, make the authorizing user a site administrator; its scheduled incremental runs wait for the next full run, the other resources go on',
      );
    }
  }
  return notes;
}

/** `hiresync status`: a table of each account's and resource's last run and pending checkpoint. */
export const status = defineCommand({
  name: 'status',
  summary: "show each resource's last run and pending checkpoint",
  description: `One line per account and resource: the last run (mode, started, finished,
    pages, records, outcome, error), the last success, and whether a checkpoint is
    pending. The accounts: default when the environment sets its credentials
    (HIRESYNC_CLIENT_ID or HIRESYNC_API_KEY) or it has runs, then every registered
    account; the resources: the built-in ones, or an account's own
    ('accounts add|update --resources'), then any other it has runs of. A resource whose last run was answered 403 shows as not permitted,
    with the scope to ask for (harvest:NAME:list) below the table, or, when
    every resource of the account was refused, that its authorizing user is
    most likely not a site administrator. With registered accounts, an account column comes first and a
    disabled account's state shows in its outcome; a partner account that needs
    re-authorizing is named below the table, with why and what to do, and so is
    a typed view (or all_accounts union) that shows null where the records
    hold values: a column an analyst's view keeps from widening or that shows
    no key, or a refresh that could not finish (the column or the cause, the
    object in the way and the command that resolves it), and a
    resource whose last run found the API's clock further from the worker's than
    HIRESYNC_UPDATED_LOOKBACK. Needs DATABASE_URL and REDIS_URL.
    Exit 0, 1 when Postgres or Redis cannot be read, 2 for an account name that
    is malformed or not registered.`,
  options,
  async execute(values, { env, stdout, stderr }) {
    const named = parseAccounts(values.account);
    const config = loadStatusConfig(env);
    const db = createDatabase(config.databaseUrl, { max: 2, applicationName: 'hiresync status' });
    // Status reads once: fail fast rather than wait for Redis to come back.
    const redis = new Redis(config.redisUrl, {
      maxRetriesPerRequest: 1,
      connectTimeout: 5000,
      retryStrategy: () => null,
    });
    let redisError: Error | undefined;
    redis.on('error', (error: Error) => {
      redisError = error;
    });
    try {
      await checkConnections(db, redis, { prefix: config.redisPrefix }).catch((error: unknown) => {
        // ioredis reports a refused connection as "Connection is closed"; name the real cause.
        if (redisError && /^cannot reach Redis/.test(coerceError(error).message)) {
          throw new HiresyncError(`cannot reach Redis (${redisError.message}): check REDIS_URL`);
        }
        throw error;
      });
      const registered = await new AccountStore(db).list();
      // default only where it exists: the environment sets its credentials, or it has run.
      const withDefault = await defaultAccountShown(db, defaultAuthModeOf(env) !== undefined);
      const states = new Map<string, string>([
        ...(withDefault ? [[DEFAULT_ACCOUNT, 'enabled'] as const] : []),
        ...registered.map((a) => [a.name, a.state] as const),
      ]);
      const unknown = (named ?? []).filter((n) => !states.has(n));
      if (unknown.length > 0) {
        stderr.write(
          `hiresync status: no account ${unknown.join(', ')}; see 'hiresync accounts list'\n`,
        );
        return EXIT.usage;
      }
      const accounts = named ?? [...states.keys()];
      const withAccount = accounts.some((a) => a !== DEFAULT_ACCOUNT);
      if (accounts.length === 0) {
        stdout.write(
          "no account: the environment sets no credentials and none is registered (see 'hiresync accounts add')\n",
        );
        return EXIT.ok;
      }
      // An account whose settings name its own resources shows those.
      const own = new Map(
        [...(await new AccountSettingsStore(db).all())].flatMap(([account, settings]) =>
          settings.resources ? [[account, settings.resources] as const] : [],
        ),
      );
      const statuses = await readStatus(db, redis, config.redisPrefix, accounts, own);
      const rows = statuses.map((s) => {
        const r = s.lastRun;
        const state = states.get(s.account) ?? 'enabled';
        return [
          ...(withAccount ? [s.account] : []),
          s.resource,
          r?.mode ?? 'never run',
          r?.started_at ?? '-',
          r?.finished_at ?? '-',
          r ? String(r.pages) : '-',
          r ? String(r.records) : '-',
          ((outcome) => (state === 'enabled' ? outcome : `${outcome} (account ${state})`))(
            isNotPermitted(r) ? 'not permitted' : (r?.outcome ?? '-'),
          ),
          s.lastSuccess?.finished_at ?? '-',
          s.checkpoint
            ? `yes: run ${s.checkpoint.runId}, ${s.checkpoint.pagesDone} pages done`
            : 'no',
          state === 'needs_reauthorization'
            ? `needs re-authorizing: run 'hiresync accounts authorize ${s.account}'`
            : (s.problem ??
              (isNotPermitted(r)
                ? `ask for scope ${scopeOfRun(s.resource, r?.error ?? null)}: ${redactSecrets(r?.error ?? '')}`
                : redactSecrets(r?.error ?? ''))),
        ];
      });
      stdout.write(
        `${formatTable([...(withAccount ? ['account'] : []), 'resource', 'last run', 'started', 'finished', 'pages', 'records', 'outcome', 'last success', 'checkpoint pending', 'error'], rows)}\n`,
      );
      // Why each shown account needs re-authorizing, as `accounts list` says it.
      const waiting = registered.filter(
        (a) => a.state === 'needs_reauthorization' && accounts.includes(a.name),
      );
      if (waiting.length > 0) stdout.write(`\n${waiting.map(reauthorizationNote).join('\n')}\n`);
      const refused = notPermittedNotes(statuses, withAccount);
      if (refused.length > 0) stdout.write(`\n${refused.join('\n')}\n`);
      // Typed views that show null where the records hold values, and why.
      const blocked = await readTypedViewBlocks(db, accounts);
      if (blocked.length > 0) {
        stdout.write(`\n${blocked.map((b) => `${b.message} (since ${b.since})`).join('\n')}\n`);
      }
      const skewed = statuses.flatMap((s) => {
        const note = clockSkewNote(s, config.updatedLookbackMs, withAccount);
        return note === undefined ? [] : [note];
      });
      if (skewed.length > 0) stdout.write(`\n${skewed.join('\n')}\n`);
      return EXIT.ok;
    } catch (error) {
      stderr.write(`hiresync status: ${redactSecrets(coerceError(error).message)}\n`);
      return EXIT.failed;
    } finally {
      await db.destroy();
      redis.disconnect();
    }
  },
});
