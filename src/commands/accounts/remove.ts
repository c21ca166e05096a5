import { schemaOf } from '../../account-name.js';
import { removeAccountSchedulers } from '../../accounts/account-keys.js';
import { AccountStore } from '../../accounts/account-store.js';
import type { DropLeftDataOutcome } from '../../accounts/drop-left-data.js';
import type { DropConsent, DropQuestion, RemovalRefusal } from '../../accounts/removal-request.js';
import { type RemovalOutcome, removeAccount } from '../../accounts/remove-account.js';
import { UnknownAccountError } from '../../accounts/stored-account.js';
import { TokenCipher } from '../../api/token-cipher.js';
import { loadAccountsConfig, loadDefaultAuth } from '../../config/load-config.js';
import { HiresyncError, UsageError } from '../../errors.js';
import { createSyncQueue } from '../../queue/sync-job.js';
import type { RedisTarget } from '../../redis/redis-target.js';
import { DependentObjectsError } from '../../warehouse/layout/drop-account-schema.js';
import { describeStoredRows } from '../../warehouse/layout/stored-rows.js';
import { EXIT, type Input, type Output } from '../command.js';
import type { OptionTable } from '../options.js';
import { openDatabase } from './connections.js';
import { readLine } from './read-secret.js';
import { openRedis } from './redis-connection.js';
import { checkAccountName, defineSubcommand } from './subcommand.js';

/** Options of `hiresync accounts remove`. */
export const options = {
  'drop-data': {
    type: 'boolean',
    description: "also drop the account's schema, with every table and row in it",
  },
  yes: {
    type: 'boolean',
    description: 'with --drop-data: drop without asking (for scripts; required without a terminal)',
  },
  cascade: {
    type: 'boolean',
    description:
      "with --drop-data: also drop the objects of other schemas that depend on the account's schema (views, foreign keys, ...), naming them",
  },
} as const satisfies OptionTable;

/** `hiresync accounts remove NAME [--drop-data [--yes] [--cascade]]`: forgets an account, and with --drop-data its data. */
export const remove = defineSubcommand({
  name: 'remove',
  operand: 'NAME',
  description: `Removes the account NAME: its row and sealed credentials, its unused connect links, its BullMQ job
    schedulers, its checkpoints, and its token, token lock and rate-limit state in Redis
    (unless another account, default included, uses the same credential); the
    all_accounts views no longer include it. Its schema NAME and its data stay unless
    --drop-data is given; 'accounts add NAME --reuse-data' takes them back (without
    --reuse-data, add refuses a name whose data is stored: a name reused for another
    customer never shows the earlier one's rows).

    --drop-data also works for a name no account has: it drops what an earlier
    registration of NAME left stored (removed without --drop-data), its rows of the
    shared tables and its schema NAME if hiresync's, asking, refusing dependents unless
    --cascade, all or nothing, as below; after it, 'accounts add NAME' starts empty.

    --drop-data drops schema NAME too. On a terminal it first asks (drop schema NAME
    with N tables and M rows? [y/N]) and goes on only on y or yes; --yes skips the
    question, and without a terminal --yes is required (exit 2 otherwise, nothing
    changed; finishing an interrupted removal, which drops nothing, needs none). It
    refuses a schema NAME that is not hiresync's, and one that objects of other schemas
    depend on (an analyst's view selecting from NAME.jobs, a foreign key to one of its
    tables, an analyst's own view in all_accounts), naming each of them, unless
    --cascade, which drops them too and says which; the all_accounts views hiresync
    builds are rebuilt without NAME.

    All or nothing: the row, the all_accounts views and the schema change in one
    Postgres transaction; when it fails, nothing is removed, in Postgres or Redis.
    Redis is cleaned after it commits; should that fail, running 'hiresync accounts
    remove NAME' again (with or without --drop-data) finishes it and says whether the
    schema was dropped.

    Needs DATABASE_URL and REDIS_URL. Exit 0 when removed (or an unregistered NAME's data dropped); 1
    when no account NAME is registered (with --drop-data: nor anything of it stored), the
    drop is refused or not confirmed, or Postgres or Redis fails; 2 on a
    usage or configuration error (--drop-data without --yes and without a terminal).`,
  options,
  async execute(values, name, { env, stdin, stdout, stderr }) {
    checkAccountName(name, 'removed');
    const dropData = values['drop-data'] === true;
    if (!dropData && (values.cascade || values.yes)) {
      throw new UsageError(
        `${values.cascade ? '--cascade' : '--yes'} applies only with --drop-data (remove without --drop-data drops nothing)`,
      );
    }
    const config = loadAccountsConfig(env, { redis: true });
    const prefix = config.redisPrefix;
    // The environment's credentials (default), as the worker reads them: their
    // token and pacing keys stay when the removed account shares them.
    const defaultAuth = loadDefaultAuth(env);
    const defaultNamespace = defaultAuth ? new TokenCipher(defaultAuth).namespace : undefined;
    const db = await openDatabase(config.databaseUrl, 'remove');
    try {
      // Redis is reached before anything changes: when it is down, nothing does.
      const redis = await openRedis(config.redis as RedisTarget);
      const queue = createSyncQueue(redis, prefix);
      try {
        const outcome = await removeAccount(
          {
            db,
            store: new AccountStore(db),
            redis,
            prefix,
            removeSchedulers: (account) => removeAccountSchedulers(queue, account),
            defaultNamespace,
          },
          {
            name,
            dropData,
            cascade: values.cascade === true,
            consent: values.yes ? 'yes' : askOn(stdin, stderr),
          },
        );
        return render(outcome, dropData, stdout, stderr);
      } finally {
        await queue.close();
        redis.disconnect();
      }
    } finally {
      await db.destroy();
    }
  },
});

/** Asks on the terminal before dropping data (--drop-data without --yes). */
function askOn(stdin: Input | undefined, stderr: Output): DropConsent {
  if (stdin?.isTTY !== true) return 'no terminal';
  return async (question) => {
    stderr.write(describeQuestion(question));
    const answer = (await readLine(stdin, 'answer')).toLowerCase();
    return answer === 'y' || answer === 'yes';
  };
}

function describeQuestion(question: DropQuestion): string {
  const outside =
    question.cascade.length > 0 ? `, and outside it ${question.cascade.join(', ')}` : '';
  return question.of === 'account'
    ? `drop schema ${question.schema} with ${question.tables} tables and ${question.rows} rows${outside}, and remove account ${question.name}? [y/N] `
    : `drop ${question.what} ${whoseLeftData(question.name)}${outside}? [y/N] `;
}

/** Whose the data left by an earlier registration of `name` is. */
function whoseLeftData(name: string): string {
  return `stored from an earlier registration of ${name} (no account ${name} is registered)`;
}

/** Prints a removal's outcome; returns the exit code, or throws the error to print. */
function render(
  outcome: RemovalOutcome,
  dropData: boolean,
  stdout: Output,
  stderr: Output,
): number {
  switch (outcome.kind) {
    case 'removed':
    case 'unfinished': {
      const { account } = outcome;
      for (const warning of outcome.warnings) {
        stderr.write(`hiresync accounts remove: warning: ${warning}\n`);
      }
      if (outcome.kind === 'unfinished') {
        throw new HiresyncError(
          `account ${account.name} is unregistered${dropData ? ` and schema ${account.schema} dropped` : ''}, but its connect links, job schedulers and Redis keys could not all be deleted (${outcome.error.message}): run 'hiresync accounts remove ${account.name}' again to finish`,
          { cause: outcome.error },
        );
      }
      const also =
        outcome.cascaded.length > 0 ? `; also dropped: ${outcome.cascaded.join(', ')}` : '';
      stdout.write(
        `removed account ${account.name} (${outcome.cleaned.schedulers} job scheduler(s), ${outcome.cleaned.keys} Redis key(s)); ${
          dropData
            ? `dropped schema ${account.schema}${also}`
            : `its data stays in schema ${account.schema} (drop it with --drop-data; only 'hiresync accounts add ${account.name} --reuse-data' shows it again)`
        }\n`,
      );
      return EXIT.ok;
    }
    case 'finished': {
      const { name, cleaned } = outcome;
      const schema = schemaOf(name);
      stdout.write(
        `finished removing account ${name} (${cleaned.schedulers} job scheduler(s), ${cleaned.keys} Redis key(s)); it was already unregistered${
          outcome.droppedEarlier
            ? ` and schema ${schema} already dropped`
            : dropData
              ? ''
              : `; its data stays in schema ${schema}`
        }\n`,
      );
      if (outcome.leftData === undefined) return EXIT.ok;
      if (outcome.leftData.kind === 'failed') throw outcome.leftData.error;
      return render(outcome.leftData, dropData, stdout, stderr);
    }
    case 'left data':
      throw new HiresyncError(
        `no account ${outcome.name} is registered; ${outcome.name}: ${describeStoredRows(outcome.stored)} stored from an earlier registration: 'hiresync accounts remove ${outcome.name} --drop-data' drops them`,
      );
    default:
      return renderLeftData(outcome, stdout, stderr);
  }
}

/** Prints what became of dropping an unregistered name's data, or a refusal. */
function renderLeftData(outcome: DropLeftDataOutcome, stdout: Output, stderr: Output): number {
  if (outcome.kind === 'unknown') throw new UnknownAccountError(outcome.name);
  if (outcome.kind !== 'left data dropped') return renderRefusal(outcome, stderr);
  const { name } = outcome;
  const also = outcome.cascaded.length > 0 ? `; also dropped: ${outcome.cascaded.join(', ')}` : '';
  const left = outcome.schemaLeftAlone
    ? `; schema ${schemaOf(name)} is not hiresync's and was left alone`
    : '';
  stdout.write(
    `dropped ${outcome.what} ${whoseLeftData(name)}${also}${left}; 'hiresync accounts add ${name}' now starts it empty\n`,
  );
  return EXIT.ok;
}

/** A refused removal: throws its error (exit 1, or 2 without a terminal); exit 1 when not confirmed. */
function renderRefusal(refusal: RemovalRefusal, stderr: Output): number {
  const { name } = refusal;
  const nothing =
    'of' in refusal && refusal.of === 'left data' ? 'nothing was dropped' : 'nothing was removed';
  switch (refusal.kind) {
    case 'no terminal':
      throw new UsageError(
        `--drop-data drops ${refusal.dropping} ${refusal.of === 'account' ? 'with every table and row in it' : whoseLeftData(name)}, and there is no terminal to ask on: confirm with --yes (hiresync accounts remove ${name} --drop-data --yes); ${nothing}`,
      );
    case 'not hiresync':
      throw new HiresyncError(
        `schema ${refusal.schema} is not hiresync's (it holds objects hiresync did not create): --drop-data never drops it; nothing was removed ('hiresync accounts remove ${name}' without --drop-data forgets the account and leaves the schema alone)`,
      );
    case 'dependents':
      throw new HiresyncError(
        `${new DependentObjectsError(refusal.schema, refusal.objects).message}; ${nothing}`,
      );
    case 'not confirmed':
      stderr.write(`hiresync accounts remove: not confirmed; ${nothing}\n`);
      return EXIT.failed;
  }
}
