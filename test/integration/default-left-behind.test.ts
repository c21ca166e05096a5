// A deployment that once had the environment's credentials (account default,
// schema public) and now runs without them: its worker has no default (no
// schedule, no metric), so its console shows none either; `status` from a
// shell without them still shows default's runs (the worker may have the
// credentials the shell lacks) but says what `accounts list` says of it:
// "not configured here", never "enabled".
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { consoleOptionsOf } from '../../src/commands/worker-console.js';
import { loadConfig } from '../../src/config/load-config.js';
import { main } from '../../src/main.js';
import { createSyncQueue } from '../../src/queue/sync-job.js';
import { RESOURCE_NAMES } from '../../src/resources/index.js';
import type { StatusReport } from '../../src/status/report-types.js';
import { targetsOf } from '../support/accounts-harness.js';
import { captureIo } from '../support/capture-io.js';
import { captureLogger } from '../support/capture-logger.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { defer, accounts } = cleanupAfterEach();

async function hiresync(argv: string[], env: Record<string, string>) {
  const io = captureIo();
  const code = await main(argv, env, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

describe('default left behind in public by an earlier configuration', () => {
  it("status says 'not configured here' as accounts list does, and the worker's console, like its metrics, shows no default", async () => {
    const h = await accounts({ accounts: ['alpha'] });
    const synced = await h.sync(targetsOf(['default', 'alpha'], ['jobs']), 'full');
    expect(synced.map((o) => o.ok)).toEqual([true, true]);
    const { HIRESYNC_CLIENT_ID, HIRESYNC_CLIENT_SECRET, ...without } = h.env;
    expect(HIRESYNC_CLIENT_ID).toBeTruthy();

    const list = JSON.parse((await hiresync(['accounts', 'list', '--json'], without)).stdout);
    expect(list.accounts[0]).toMatchObject({ name: 'default', state: 'not configured here' });
    const status = await hiresync(['status', '--json'], without);
    expect(status.stderr).toBe('');
    const report = JSON.parse(status.stdout) as StatusReport;
    expect(report.accounts.map((a) => [a.name, a.state])).toEqual([
      ['default', 'not configured here'],
      ['alpha', 'enabled'],
    ]);

    const redis = new Redis(without.REDIS_URL as string, { lazyConnect: true });
    defer(() => redis.disconnect());
    const config = loadConfig(
      { ...without, HIRESYNC_CONSOLE_PASSWORD: 'a-console-password' },
      RESOURCE_NAMES,
    );
    const queue = createSyncQueue(redis, config.redisPrefix);
    defer(() => queue.close());
    const options = consoleOptionsOf(config, { db: h.database.db, redis }, captureLogger().logger, {
      queue,
      env: without,
      repairSchedules: async () => [],
    });
    const page = await options?.readReport();
    expect(page?.accounts.map((a) => a.name)).toEqual(['alpha']);
  });
});
