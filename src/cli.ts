#!/usr/bin/env -S node --max-semi-space-size=8 --max-old-space-size=512
// The hiresync bin: reads the environment once (over .env in the working
// directory, the environment winning), runs one command, sets the exit code.
// Commands live in src/commands; the dispatcher in src/main.ts.
import { readEnv } from './config/env.js';
import { withEnvFile } from './config/env-file.js';
import type { Env } from './config/types.js';
import { coerceError } from './errors.js';
import { main } from './main.js';
import { redactSecrets } from './secret.js';

let env: Env | undefined;
try {
  env = withEnvFile(readEnv(), process.cwd());
} catch (error) {
  // An unreadable or malformed .env: a configuration error, before anything connects.
  process.stderr.write(`hiresync: ${redactSecrets(coerceError(error).message)}\n`);
  process.exitCode = 2;
}

if (env !== undefined) {
  main(process.argv.slice(2), env).then(
    (code) => {
      process.exitCode = code;
      // Every command closes what it opened and the process ends by itself
      // (test/integration/sync-exits-by-itself.test.ts); this is only a net
      // should a stray handle ever linger.
      setTimeout(() => process.exit(code), 3000).unref();
    },
    (error: unknown) => {
      process.stderr.write(`hiresync: ${redactSecrets(coerceError(error).message)}\n`);
      process.exitCode = 1;
    },
  );
}
