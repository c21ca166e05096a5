import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadAccountsConfig } from '../../src/config/load-config.js';

const DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/hiresync';
const HIRESYNC_SECRET_KEY = randomBytes(32).toString('base64');

// README: "Of the accounts commands, add and rekey need DATABASE_URL and
// HIRESYNC_SECRET_KEY (add also ... REDIS_URL unless --no-test), list and
// enable need DATABASE_URL, disable and remove also REDIS_URL."
describe('the configuration of accounts subcommands that do not touch Redis', () => {
  it('`accounts list` and `accounts enable` need DATABASE_URL only, not REDIS_URL', () => {
    expect(() => loadAccountsConfig({ DATABASE_URL })).not.toThrow();
  });

  it('`accounts add --no-test` and `accounts rekey` need DATABASE_URL and HIRESYNC_SECRET_KEY, not REDIS_URL', () => {
    expect(() =>
      loadAccountsConfig({ DATABASE_URL, HIRESYNC_SECRET_KEY }, { secretKey: 'seal' }),
    ).not.toThrow();
  });
});
