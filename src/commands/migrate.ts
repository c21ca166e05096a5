import { loadDatabaseConfig } from '../config.js';
import { coerceError } from '../errors.js';
import { migrateAll } from '../warehouse/account-schemas.js';
import { createDatabase } from '../warehouse/database.js';
import { defineCommand, EXIT } from './command.js';
import { describeConnectionError } from './connection-error.js';
import type { OptionTable } from './options.js';

/** `hiresync migrate` takes no option but `--help`. */
export const options = {} as const satisfies OptionTable;

/** `hiresync migrate`: brings every schema up to date; 0 when up to date, 1 on failure. */
export const migrate = defineCommand({
  name: 'migrate',
  summary: 'apply pending database migrations (needs DATABASE_URL)',
  description: `Applies pending database migrations; safe to run any number of times, from
    several processes at once. Brings up to date hiresync's control schema (hiresync),
    public (the default account's tables), then the schema of every registered account,
    and rebuilds the all_accounts views; prints what it applied to each schema. Needs
    DATABASE_URL. Exit 0 when the database is up to date, 1 on failure.`,
  options,
  async execute(_values, { env, stdout, stderr }) {
    const config = loadDatabaseConfig(env);
    const db = createDatabase(config.databaseUrl, { max: 1, applicationName: 'hiresync migrate' });
    try {
      const { schemas, warnings } = await migrateAll(db);
      const changed = schemas.filter((s) => s.applied.length > 0);
      for (const { schema, applied } of changed) {
        stdout.write(
          `schema ${schema}: applied ${applied.length} migration(s): ${applied.join(', ')}\n`,
        );
      }
      const upToDate = schemas.length - changed.length;
      stdout.write(
        changed.length === 0
          ? `database is up to date (${schemas.length} schemas)\n`
          : upToDate > 0
            ? `${upToDate} other schema(s) already up to date\n`
            : '',
      );
      for (const warning of warnings) stderr.write(`hiresync migrate: warning: ${warning}\n`);
      return EXIT.ok;
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause ?? error;
      stderr.write(
        `hiresync migrate: ${describeConnectionError(cause, 'DATABASE_URL') ?? coerceError(error).message}\n`,
      );
      return EXIT.failed;
    } finally {
      await db.destroy();
    }
  },
});
