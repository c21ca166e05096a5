import { loadDatabaseConfig } from '../config.js';
import { coerceError } from '../errors.js';
import { createDatabase } from '../warehouse/database.js';
import { migrateToLatest } from '../warehouse/migrate.js';
import { defineCommand, EXIT } from './command.js';
import { describeConnectionError } from './connection-error.js';
import type { OptionTable } from './options.js';

/** `hiresync migrate` takes no option but `--help`. */
export const options = {} as const satisfies OptionTable;

/** `hiresync migrate`: applies pending migrations; 0 when up to date, 1 on failure. */
export const migrate = defineCommand({
  name: 'migrate',
  summary: 'apply pending database migrations (needs DATABASE_URL)',
  description: `Applies pending database migrations; safe to run any number of times.
    Needs DATABASE_URL. Exit 0 when the database is up to date, 1 on failure.`,
  options,
  async execute(_values, { env, stdout, stderr }) {
    const config = loadDatabaseConfig(env);
    const db = createDatabase(config.databaseUrl, { max: 1, applicationName: 'hiresync migrate' });
    try {
      const { applied } = await migrateToLatest(db);
      stdout.write(
        applied.length === 0
          ? 'database is up to date\n'
          : `applied ${applied.length} migration(s): ${applied.join(', ')}\n`,
      );
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
