import type { Kysely } from 'kysely';
import { accountNameProblem, DEFAULT_ACCOUNT } from '../account-name.js';
import { formatDuration } from '../config/fields.js';
import { loadDatabaseConfig, recordPolicyOf } from '../config/load-config.js';
import { resourceNameProblem } from '../config/resource-names.js';
import { parseDuration } from '../duration.js';
import {
  ConfigError,
  type ConfigProblem,
  collectProblems,
  HiresyncError,
  UsageError,
} from '../errors.js';
import type { RecordPolicy } from '../privacy/police-page.js';
import { resolvePolicy } from '../privacy/policy-targets.js';
import { BUILT_IN_RESOURCES, RESOURCE_NAMES } from '../resources/index.js';
import type { Database } from '../warehouse/tables.js';
import { type ErasableAccount, erasableAccounts } from '../warehouse/upkeep/erase-deleted.js';
import { reapplyResource, rulesOf } from '../warehouse/upkeep/policy-reapply.js';
import { RunWritingError, waitForRuns } from '../warehouse/upkeep/reapply-guard.js';
import { assertReapplyProgress } from '../warehouse/upkeep/reapply-progress.js';
import { openCheckedDatabase } from './checked-database.js';
import { type CommandContext, defineCommand, EXIT } from './command.js';
import { erasableResourcesOf } from './erasable-resources.js';
import { intOption } from './number-options.js';
import type { OptionTable, OptionValues } from './options.js';
import { ReapplyReport } from './reapply-policy-report.js';

/** Options of `hiresync reapply-policy`. */
export const options = {
  account: {
    type: 'string',
    value: 'NAME',
    description:
      'only this account: default (schema public) or a registered account (default every account whose data the database holds)',
  },
  resource: {
    type: 'string',
    value: 'NAME',
    description:
      'only this resource (jobs, tracking_links, a list resource such as candidates, …); default every resource the policy names',
  },
  batch: {
    type: 'string',
    value: 'N',
    default: '500',
    description: 'rows per batch, each batch one short transaction (1 to 10000)',
  },
  wait: {
    type: 'string',
    value: 'D',
    default: '1m',
    description:
      'how long to wait for a sync run of a resource in progress to end before rewriting it (a run under the old policy would write old values again), from 1s to 1h',
  },
  again: {
    type: 'boolean',
    description:
      'pass over every row of relations already done under this policy again (without it, only what runs wrote since is looked at)',
  },
} as const satisfies OptionTable;

/** Bounds of --wait. */
const WAIT = [1000, 3_600_000] as const;

/** Longest wait for one row a run's page holds, before the command stops (exit 1). */
const ROW_WAIT_MS = 60_000;

/** What reapply-policy is asked to do, read before anything connects. */
interface ReapplyRequest {
  account: string | undefined;
  resource: string | undefined;
  batchSize: number;
  waitMs: number;
  again: boolean;
}

function parseRequest(values: OptionValues<typeof options>): ReapplyRequest {
  const { account, resource } = values;
  const accountProblem =
    account === undefined || account === DEFAULT_ACCOUNT ? undefined : accountNameProblem(account);
  if (accountProblem) throw new UsageError(`--account: ${accountProblem}`);
  const resourceProblem =
    resource === undefined || RESOURCE_NAMES.includes(resource)
      ? undefined
      : resourceNameProblem(resource);
  if (resourceProblem) throw new UsageError(`--resource: ${resourceProblem}`);
  const batchSize = intOption('batch', values.batch, 1);
  if (batchSize > 10_000) throw new UsageError(`--batch takes 1 to 10000 rows, got ${batchSize}`);
  const waitMs = parseDuration(values.wait);
  if (waitMs === undefined || waitMs < WAIT[0] || waitMs > WAIT[1]) {
    throw new UsageError(
      `--wait takes a duration from ${formatDuration(WAIT[0])} to ${formatDuration(WAIT[1])} (such as 5m), got ${JSON.stringify(values.wait)}`,
    );
  }
  return { account, resource, batchSize, waitMs, again: values.again === true };
}

/**
 * DATABASE_URL and the policy resolved against the built-in resources (as
 * createApp resolves it: mirrored onto reference columns, no hash of a typed
 * key); every problem at once as a ConfigError (exit 2), before connecting.
 * Undefined policy: HIRESYNC_FIELD_POLICY is not set.
 */
function configOf(env: CommandContext['env']): {
  databaseUrl: string | undefined;
  policy: RecordPolicy | undefined;
} {
  const problems: ConfigProblem[] = [];
  const database = collectProblems(problems, () => loadDatabaseConfig(env));
  const { fieldPolicy, problems: policyProblems } = recordPolicyOf(env, RESOURCE_NAMES);
  problems.push(...policyProblems);
  let policy: RecordPolicy | undefined;
  if (fieldPolicy) {
    const resolved = resolvePolicy(fieldPolicy, BUILT_IN_RESOURCES);
    if ('problems' in resolved) {
      problems.push(
        ...resolved.problems.map((message) => ({ variable: 'HIRESYNC_FIELD_POLICY', message })),
      );
    } else {
      policy = resolved.policy;
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { databaseUrl: database?.databaseUrl, policy };
}

/** The accounts to rewrite: every one whose views exist, or the one asked for (else exit 2). */
async function accountsOf(
  db: Kysely<Database>,
  account: string | undefined,
): Promise<ErasableAccount[]> {
  const all = await erasableAccounts(db);
  if (account === undefined) return all;
  const found = all.filter((a) => a.account === account);
  if (found.length === 0) {
    throw new UsageError(
      `account ${account} has no data in this database (${account === DEFAULT_ACCOUNT ? "run 'hiresync migrate'" : "not registered, or removed with --drop-data; see 'hiresync accounts list'"}): nothing was rewritten`,
    );
  }
  return found;
}

/** `hiresync reapply-policy`: rewrites what is stored so that it matches the field policy. */
export const reapplyPolicy = defineCommand({
  name: 'reapply-policy',
  description: `Rewrites what is stored so that it matches HIRESYNC_FIELD_POLICY (with
    HIRESYNC_HASH_KEY): for each account (or --account) and each resource the policy names
    (or --resource), the records of its table, every version in its history
    (<resource>_history) and its rejected records, and for tracking links and the
    reference tables the columns filled from a policed key: a dropped value goes, a hashed
    one is stored as its hash. A value already hashed is left as it is; a row the policy
    leaves as it is is not written.

    Works in batches (--batch rows, each one short transaction that locks only the rows it
    rewrites), recording its progress in hiresync.policy_reapply: run it again after a stop
    and it continues from the last batch; of a relation done under the same policy only the
    rows written since are looked at (already applied, unless a run under another policy
    wrote some: they are rewritten); --again passes over every row once more; a changed
    policy starts over. Restart every worker with the new policy first: a worker still on the
    old one writes old values again (a relation a run wrote meanwhile under another policy is
    rewritten, reported, and left to a rerun). Before each resource it waits up to --wait for
    a sync run of it in progress (which holds the resource to its end) to end, saying which.

    Needs DATABASE_URL. Exit 0 when done; 1 when stopped (a signal, a row held for over a
    minute, a run still writing after --wait, Postgres failing) or when runs wrote under
    another policy meanwhile or since the last pass; 2 on a bad HIRESYNC_FIELD_POLICY or
    HIRESYNC_HASH_KEY, a bad option, or an account this database holds nothing of.`,
  options,
  async execute(values, { env, stdout, stderr, signals }) {
    const request = parseRequest(values);
    const { databaseUrl, policy } = configOf(env);
    if (!policy || databaseUrl === undefined) {
      stdout.write('HIRESYNC_FIELD_POLICY is not set: nothing to reapply\n');
      return EXIT.ok;
    }
    const named = policy.policy.resources.filter(
      (name) => request.resource === undefined || name === request.resource,
    );
    if (named.length === 0) {
      stdout.write(
        `HIRESYNC_FIELD_POLICY has no rule for ${request.resource}: nothing to reapply (it names ${policy.policy.resources.join(', ')})\n`,
      );
      return EXIT.ok;
    }
    stdout.write(
      `HIRESYNC_FIELD_POLICY: ${named.map((name) => `${name} (${rulesOf(policy, name).text})`).join(', ')}\n`,
    );
    const stop = new AbortController();
    const abort = () => stop.abort(new HiresyncError('stopped by a signal'));
    signals.once('SIGINT', abort);
    signals.once('SIGTERM', abort);
    const db = await openCheckedDatabase(
      databaseUrl,
      'hiresync reapply-policy',
      assertReapplyProgress,
    );
    const report = new ReapplyReport(stdout);
    try {
      for (const { account, schema } of await accountsOf(db, request.account)) {
        const stored = await erasableResourcesOf(db, schema);
        for (const name of named) {
          const resource = stored.find((r) => r.name === name);
          if (!resource) {
            report.nothingStored(account, name);
            continue;
          }
          await waitForRuns(db, account, name, {
            waitMs: request.waitMs,
            onWait: (what) =>
              stdout.write(
                `${account}/${name}: ${what}: waiting up to ${formatDuration(request.waitMs)} for it to end…\n`,
              ),
            onInterrupted: (run) =>
              stdout.write(
                `${account}/${name}: sync_runs run ${run.id} of ${run.resource} says running, but no process holds the resource: it was interrupted and resumes when a worker takes it again (what it writes under an old policy is rewritten by the next reapply-policy)\n`,
              ),
          });
          await reapplyResource(db, { account, schema, resource }, policy, {
            again: request.again,
            batchSize: request.batchSize,
            rowWaitMs: ROW_WAIT_MS,
            signal: stop.signal,
            onStart: (r) => report.start(r),
            onBatch: (id, p) => report.batch(id, p),
            onDone: (r) => report.done(r),
          });
        }
      }
    } catch (error) {
      if (error instanceof RunWritingError) {
        report.summary();
        stderr.write(`hiresync reapply-policy: ${error.message}\n`);
        return EXIT.failed;
      }
      if (!stop.signal.aborted) throw error;
      report.summary();
      stderr.write(
        'hiresync reapply-policy: stopped after the batch in hand; run it again to continue from there\n',
      );
      return EXIT.failed;
    } finally {
      await db.destroy();
    }
    report.summary();
    if (report.late === 0) return EXIT.ok;
    stderr.write(
      `hiresync reapply-policy: ${report.late} rows were written during the rewrite or since the last one by a run under another HIRESYNC_FIELD_POLICY (a worker not restarted since the policy changed); they were rewritten, but that worker will keep writing old values: restart every worker with this policy, then run reapply-policy again (it checks only what was written since)\n`,
    );
    return EXIT.failed;
  },
});
