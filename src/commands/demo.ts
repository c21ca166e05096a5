import { loadDemoConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { defineCommand, EXIT } from './command.js';
import {
  DEMO_ACCOUNT,
  DEMO_DATABASE,
  DEMO_PARTNER_ACCOUNT,
  type DemoPartner,
  runDemo,
} from './demo-tour.js';
import { formatTable } from './format-table.js';
import { intOption } from './number-options.js';
import type { OptionTable } from './options.js';
import { formatRunSummary } from './run-summary-table.js';

/** Options of `hiresync demo`. */
export const options = {
  records: { type: 'string', value: 'N', description: 'records per resource', default: '3000' },
} as const satisfies OptionTable;

/** `hiresync demo` (`npm run demo`): the main job on built-in defaults, end to end. */
export const demo = defineCommand({
  name: 'demo',
  description: `Starts the built-in API simulator serving three accounts, creates a fresh
    database ${DEMO_DATABASE} on the Postgres server of DATABASE_URL (default
    postgres://postgres@127.0.0.1:5432/postgres; no existing data is touched),
    migrates it, registers a second account (${DEMO_ACCOUNT}, client credentials) beside
    the environment's default, connects a third (${DEMO_PARTNER_ACCOUNT}) as a partner
    account through the authorization code grant ('accounts authorize', the demo playing
    the customer's browser), syncs every resource of all three through the queue on
    REDIS_URL (default redis://127.0.0.1:6379), prints the summary and runs example
    analyst queries, one across every account; candidates are synced under a field
    policy (emails hashed, phone numbers dropped) and one of them is erased. Exit 0 when every run succeeded, 1
    otherwise.`,
  options,
  async execute(values, { env, stdout, stderr }) {
    const records = intOption('records', values.records, 1);
    const { adminUrl, redisUrl } = loadDemoConfig(env);
    const logger = createLogger({ level: 'error', destination: stderr });
    stdout.write(
      `hiresync demo: the built-in API simulator serving three accounts (default: ${records} records per resource; ${DEMO_ACCOUNT}: half as many; ${DEMO_PARTNER_ACCOUNT}: a third), a fresh database ${DEMO_DATABASE}, one sync of every resource of each\n` +
        'The simulator sends one malformed record in 250 on purpose: they land in rejected_records.\n\n',
    );
    const result = await runDemo({ adminUrl, redisUrl, records, logger });
    stdout.write(`${describePartner(result.partner)}\n\n`);
    stdout.write(`${formatRunSummary(result.outcomes)}\n`);
    for (const q of result.queries) {
      stdout.write(`\n${q.title}:\n${q.sql}\n\n${formatTable(q.columns, q.rows)}\n`);
    }
    stdout.write(`\nThe tables are yours to query: psql ${withoutPassword(result.databaseUrl)}\n`);
    return result.outcomes.every((o) => o.ok) ? EXIT.ok : EXIT.failed;
  },
});

/** The line saying how the partner account was connected (never its code or tokens). */
export function describePartner(p: DemoPartner): string {
  const minutes = p.accessTokenTtlSeconds / 60;
  const ttl = Number.isInteger(minutes) ? `${minutes}-minute` : `${p.accessTokenTtlSeconds}-second`;
  return `${p.account} is a partner account, connected by the authorization code grant: 'hiresync accounts authorize ${p.account} --port 0' printed the authorize URL, the demo played the customer's browser (approved, followed the redirect to the loopback callback), and hiresync exchanged the code and keeps only the sealed refresh token; ${ttl} access tokens, ${p.refreshes} refresh${p.refreshes === 1 ? '' : 'es'} (each rotating the refresh token) during the sync.`;
}

/** A connection URL fit to print: its password blanked. */
function withoutPassword(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.href;
}
