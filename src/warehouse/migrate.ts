import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import { FileMigrationProvider, type MigrationResult, Migrator } from 'kysely/migration';
import { HiresyncError } from '../errors.js';
import type { Database } from './schema.js';

/** The migrations folder: `migrations/` beside `src/`, in the source tree and in `dist/` alike. */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../migrations', import.meta.url));

/** What {@link migrateToLatest} applied. */
export interface MigrateOutcome {
  applied: string[];
}

/**
 * Applies pending migrations. Safe to run any number of times and from several
 * processes at once: Kysely's Postgres adapter serialises migrators with an
 * advisory lock, and applied migrations are recorded in kysely_migration.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<MigrateOutcome> {
  const migrator = new Migrator({
    db,
    provider: new FileMigrationProvider({
      fs,
      path,
      migrationFolder: MIGRATIONS_FOLDER,
      // Imported from here, so a test runner that transforms TypeScript loads them too.
      import: (file: string) => import(file),
    }),
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r: MigrationResult) => r.status === 'Error');
  if (error) {
    throw new HiresyncError(
      `migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? String(error)}; the database is left at the last migration that succeeded`,
      { cause: error },
    );
  }
  return {
    applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName),
  };
}
