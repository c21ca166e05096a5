import { readdirSync, readFileSync } from 'node:fs';

/**
 * Every environment variable hiresync's configuration reads: the names
 * src/config/ spells (the loaders of load-config.ts and the fields they
 * parse). process.env is read nowhere else, so this is the contract a
 * deployment's settings must come from.
 */
export function variablesRead(): string[] {
  const folder = new URL('../../src/config/', import.meta.url);
  const source = readdirSync(folder)
    .filter((name) => name.endsWith('.ts'))
    .map((name) => readFileSync(new URL(name, folder), 'utf8'))
    .join('\n');
  return [
    ...new Set(
      source.match(
        /\b(HIRESYNC_[A-Z_]+|DATABASE_URL|REDIS_URL|REDIS_CA_FILE|LOG_LEVEL|LOG_FORMAT)\b/g,
      ),
    ),
  ].sort();
}
