import { loadMigrateConfig } from '../config/load-config.js';
import { coerceError, configErrorIn, HiresyncError } from '../errors.js';
import { catalogFor, RESOURCE_NAMES, typedViewDeclarations } from '../resources/index.js';
import { createDatabase } from '../warehouse/database.js';
import type { MigrateOutcome } from '../warehouse/layout/migrate.js';
import { MOVED_TO_SHARED, VIEWS_MADE } from '../warehouse/layout/schema-layout.js';
import { migrateAll, SchemaMigrationError } from '../warehouse/setup/migrate-all.js';
import { defineCommand, EXIT } from './command.js';
import { describeConnectionError } from './connection-error.js';
import type { OptionTable } from './options.js';

/** `hiresync migrate` takes no option but `--help`. */
export const options = {} as const satisfies OptionTable;

/** `hiresync migrate`: brings every schema up to date; 0 when up to date, 1 on failure. */
export const migrate = defineCommand({
  name: 'migrate',
  description: `Applies pending database migrations; safe to run any number of times, from
    several processes at once. Brings up to date hiresync's control schema (hiresync,
    which holds every account's rows in its shared tables hiresync.data_*), then public
    (the default account's views) and the schema of every registered account: a schema
    of the earlier layout (tables of its own) moves to shared storage, rows and history
    kept; a schema whose views predate a change of the shared tables gets them made
    again. Makes the views of the list resources named in HIRESYNC_RESOURCES (or made
    before) in every schema and of those an account's own --resources name in its
    schema only, and rebuilds the all_accounts views; prints what it did to each schema.
    An up-to-date deployment costs a few statements whatever the number of accounts.
    When a schema fails, the ones after it are left for the next run. Refuses while
    another role than its own (PUBLIC included; superusers aside) may create objects in
    schema hiresync, naming the revoke line; warns for each other schema it writes
    where one may. Needs DATABASE_URL. Exit 0 when the database is up to date, 1 on
    failure or refusal.`,
  options,
  async execute(_values, { env, stdout, stderr }) {
    const config = loadMigrateConfig(env, RESOURCE_NAMES);
    const db = createDatabase(config.databaseUrl, {
      max: 1,
      applicationName: 'hiresync migrate',
      onUnverified: (warning) => stderr.write(`hiresync migrate: warning: ${warning}\n`),
    });
    /** What was applied to each schema, and the warnings; `done` when the run went through. */
    const report = (
      schemas: readonly MigrateOutcome[],
      warnings: readonly string[],
      done: boolean,
    ) => {
      const changed = schemas.filter((s) => s.applied.length > 0);
      for (const { schema, applied } of changed) {
        const migrations = applied.filter((a) => a !== VIEWS_MADE && a !== MOVED_TO_SHARED);
        const steps = [
          ...(migrations.length > 0
            ? [`applied ${migrations.length} migration(s): ${migrations.join(', ')}`]
            : []),
          ...(applied.includes(MOVED_TO_SHARED)
            ? ['its tables moved to shared storage (rows and history kept), views in their place']
            : []),
          ...(applied.includes(VIEWS_MADE) ? ['its views of shared storage made'] : []),
        ];
        stdout.write(`schema ${schema}: ${steps.join('; ')}\n`);
      }
      const upToDate = schemas.length - changed.length;
      if (done) {
        stdout.write(
          changed.length === 0
            ? `database is up to date (${schemas.length} schemas)\n`
            : upToDate > 0
              ? `${upToDate} other schema(s) already up to date\n`
              : '',
        );
      }
      for (const warning of warnings) stderr.write(`hiresync migrate: warning: ${warning}\n`);
    };
    try {
      const listResources = config.resources.filter((name) => !RESOURCE_NAMES.includes(name));
      const { schemas, warnings, listResourceTables, analyticsSchemas } = await migrateAll(
        db,
        undefined,
        {
          listResources,
          // Each account's own list resources (accounts add|update --resources), in its schema.
          declared: RESOURCE_NAMES,
          typedViews: typedViewDeclarations(catalogFor(config.resources)),
        },
      );
      report(schemas, warnings, true);
      if (analyticsSchemas.length > 0) {
        stdout.write(`analytics views made in: ${analyticsSchemas.join(', ')}\n`);
      }
      if (listResourceTables.length > 0) {
        stdout.write(`list resource tables made: ${listResourceTables.join(', ')}\n`);
      }
      return EXIT.ok;
    } catch (error) {
      // TLS refused on connecting (a certificate that does not verify): exit 2 naming the parameter.
      const misconfigured = configErrorIn(error);
      if (misconfigured) throw misconfigured;
      // A schema failed: what came before it stands, and the views were rebuilt without it.
      if (error instanceof SchemaMigrationError) report(error.schemas, error.warnings, false);
      let cause: unknown = error;
      while (cause instanceof HiresyncError && cause.cause !== undefined) cause = cause.cause;
      stderr.write(
        `hiresync migrate: ${describeConnectionError(cause, 'DATABASE_URL') ?? coerceError(error).message}\n`,
      );
      return EXIT.failed;
    } finally {
      await db.destroy();
    }
  },
});
