import type { Env } from './types.js';

/**
 * The process environment, read once: the only read of `process.env` in
 * hiresync. The bin passes it to the commands, which hand it to the loaders
 * of config.ts (cli.ts lays it over .env: config/env-file.ts). A module of its
 * own, importing no package: the bin reads the
 * environment before it knows whether the command needs any configuration
 * (`--version` and `--help` need none, nor zod's).
 */
export function readEnv(): Env {
  return Object.freeze({ ...process.env });
}
