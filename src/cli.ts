#!/usr/bin/env -S node --max-semi-space-size=8 --max-old-space-size=512
// The hiresync bin: reads the environment once, runs one command, sets the
// exit code. Commands live in src/commands; the dispatcher in src/main.ts.
import { readEnv } from './config/env.js';
import { coerceError } from './errors.js';
import { main } from './main.js';
import { redactSecrets } from './secret.js';

main(process.argv.slice(2), readEnv()).then(
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
