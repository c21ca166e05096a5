import { loadDemoConfig } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { whenParentGone } from '../local-services/processes.js';
import { createLogger } from '../logger.js';
import { defineCommand, EXIT, type Signals } from './command.js';
import { demoServices, describeServices, queryLine } from './demo-services.js';
import {
  DEMO_ACCOUNT,
  DEMO_DATABASE,
  DEMO_PARTNER_ACCOUNT,
  type DemoPartner,
  type DemoResult,
  runDemo,
} from './demo-tour.js';
import { formatTable } from './format-table.js';
import { intOption } from './number-options.js';
import type { OptionTable } from './options.js';
import { formatRunSummary } from './run-summary-table.js';

/** Options of `hiresync demo`. */
export const options = {
  records: {
    type: 'string',
    value: 'N',
    description: 'candidates of default (its v3 world: N / 2 applications)',
    default: '3000',
  },
  database: {
    type: 'string',
    value: 'NAME',
    description: 'the database it creates, dropped first should it exist',
    default: DEMO_DATABASE,
  },
  keep: {
    type: 'boolean',
    description: 'keep the embedded Postgres running after the demo, to query its tables',
  },
} as const satisfies OptionTable;

/** `hiresync demo` (`npm run demo`): the main job on built-in defaults, end to end. */
export const demo = defineCommand({
  name: 'demo',
  description: `Starts the built-in API simulator serving three accounts, creates a fresh
    database (--database, default ${DEMO_DATABASE}, dropped first should it exist; nothing
    else is touched) on the
    Postgres server of DATABASE_URL, else the one answering on 127.0.0.1:5432 (user
    postgres), else an embedded Postgres it starts (its data in .hiresync/ of the
    checkout, stopped at the end unless --keep), migrates it, registers a second account
    (${DEMO_ACCOUNT}, client credentials) beside the environment's default, connects a third
    (${DEMO_PARTNER_ACCOUNT}) as a partner account through the authorization code grant
    ('accounts authorize', the demo playing the customer's browser), syncs every resource
    of all three through the queue on REDIS_URL, else the Redis answering on
    127.0.0.1:6379, else a private redis-server from PATH it starts and stops (with none,
    exit 2 before anything starts), prints the summary and runs example analyst queries,
    one across every account; candidates are synced under a field policy (emails hashed,
    phone numbers dropped) and one of them is erased. A SIGINT or SIGTERM stops what it
    started. Exit 0 when every run succeeded, 1 otherwise.`,
  options,
  async execute(values, { env, stdout, stderr, signals }) {
    const records = intOption('records', values.records, 1);
    const keep = values.keep === true;
    const database = values.database;
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(database)) {
      throw new UsageError(
        `--database ${JSON.stringify(database)}: a database name of lower-case letters, digits and underscores`,
      );
    }
    const config = loadDemoConfig(env);
    const logger = createLogger({ level: 'error', destination: stderr });
    // Whatever the demo starts, a SIGINT or SIGTERM stops before it ends.
    const { interrupted, stopWatching } = interruption(signals);
    const starting = demoServices(config);
    const first = await Promise.race([starting, interrupted]);
    if (typeof first === 'string') {
      await (await starting.catch(() => undefined))?.stop();
      stopWatching();
      return interruptedExit(first, stderr);
    }
    const services = first;
    let stopped = false;
    try {
      for (const line of describeServices(services, keep)) stdout.write(`${line}\n`);
      stdout.write(
        `hiresync demo: the built-in API simulator serving three accounts (default: a v3 world of ${Math.max(30, Math.round(records / 2))} applications with their jobs, posts, links, stage histories, offers and answers, and ${records} candidates; ${DEMO_ACCOUNT}: half as many; ${DEMO_PARTNER_ACCOUNT}: a third), a fresh database ${database}, and one sync of every resource of each account; the summary follows when they are done.\n` +
          'The simulator sends one malformed record in 250 on purpose: they land in rejected_records.\n\n',
      );
      const demo = runDemo({
        adminUrl: services.postgres.url,
        database,
        redisUrl: services.redis.url,
        records,
        logger,
      });
      const result = await Promise.race([demo, interrupted]);
      if (typeof result === 'string') return interruptedExit(result, stderr);
      stdout.write(`${describePartner(result.partner)}\n\n`);
      stdout.write(`${formatRunSummary(result.outcomes)}\n${describeChanges(result.changes)}\n`);
      for (const q of result.queries) {
        stdout.write(`\n${q.title}:\n${q.sql}\n\n${formatTable(q.columns, q.rows)}\n`);
      }
      const embedded = services.postgres.embedded;
      if (keep && embedded) {
        await services.redis.stop?.();
        await embedded.keep();
      } else {
        await services.stop();
      }
      stopped = true;
      stdout.write(`\n${queryLine(services, result.databaseUrl, keep)}\n`);
      return result.outcomes.every((o) => o.ok) ? EXIT.ok : EXIT.failed;
    } finally {
      if (!stopped) await services.stop();
      stopWatching();
    }
  },
});

/** Why the demo stops early: a signal, or its parent gone (npm passes its SIGTERM to the script's shell only). */
type Interruption = 'SIGINT' | 'SIGTERM' | 'parent';

/** Resolves to the first {@link Interruption}. */
function interruption(signals: Signals): {
  interrupted: Promise<Interruption>;
  stopWatching: () => void;
} {
  let stopWatching = () => {};
  const interrupted = new Promise<Interruption>((resolve) => {
    signals.once('SIGINT', () => resolve('SIGINT'));
    signals.once('SIGTERM', () => resolve('SIGTERM'));
    stopWatching = whenParentGone(() => resolve('parent'));
  });
  return { interrupted, stopWatching };
}

/** Says the demo was interrupted; exits as a shell reports a signal (130 SIGINT, 143 SIGTERM). */
function interruptedExit(why: Interruption, stderr: { write(t: string): unknown }): number {
  const cause = why === 'parent' ? 'the process that started it ended' : why;
  stderr.write(`hiresync: demo interrupted (${cause}); stopping what it started\n`);
  return why === 'SIGINT' ? 130 : 143;
}

/** The line saying how the partner account was connected (never its code or tokens). */
export function describePartner(p: DemoPartner): string {
  const minutes = p.accessTokenTtlSeconds / 60;
  const ttl = Number.isInteger(minutes) ? `${minutes}-minute` : `${p.accessTokenTtlSeconds}-second`;
  return `${p.account} is a partner account, connected by the authorization code grant: 'hiresync accounts authorize ${p.account} --port 0' printed the authorize URL, the demo played the customer's browser (approved, followed the redirect to the loopback callback), and hiresync exchanged the code and keeps only the sealed refresh token; ${ttl} access tokens, ${p.refreshes} refresh${p.refreshes === 1 ? '' : 'es'} (each rotating the refresh token) during the sync.`;
}

/** The line under the summary saying why default's jobs ran twice more (its last two rows). */
export function describeChanges(c: DemoResult['changes']): string {
  return `The last two runs: default's jobs again, after the API changed job ${c.changed} and deleted job ${c.dropped} (deleted 1), then changed job ${c.changed} once more; History below shows every version.`;
}
