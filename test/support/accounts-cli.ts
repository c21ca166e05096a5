import { parseSecretKeys, SecretKeys } from '../../src/config/secret-keys.js';
import { main } from '../../src/main.js';
import { captureIo } from './capture-io.js';

/** `hiresync accounts ARGV` in process under `env`, with `input` on standard input. */
export async function runAccounts(env: Record<string, string>, argv: string[], input = '') {
  const io = captureIo(input);
  const code = await main(['accounts', ...argv], env, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

/** The SecretKeys of a HIRESYNC_SECRET_KEY value; throws on one the configuration would refuse. */
export function keysOf(keys: string): SecretKeys {
  const parsed = parseSecretKeys(keys);
  if (!('keys' in parsed)) throw new Error(parsed.problem);
  return new SecretKeys(parsed.keys);
}
