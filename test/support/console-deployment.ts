import { runOnce } from '../../src/queue/run-once.js';
import { Secret } from '../../src/secret.js';
import { migrateAll } from '../../src/warehouse/setup/migrate-all.js';
import { freePort } from './free-port.js';
import { waitFor } from './lifecycle.js';

export { freePort };

import type { PartnerHarness } from './partner-harness.js';
import type { CliProcess } from './run-cli.js';

/** The console's password in these tests. */
export const CONSOLE_PASSWORD = 'console password for tests';

/** A worker serving the console over a deployment an operator has to look after. */
export interface ConsoleDeployment {
  /** The worker's own address. */
  url: string;
  /** HIRESYNC_PUBLIC_URL: `url`, and the path given, if any. */
  publicUrl: string;
  worker: CliProcess;
  /** The rows of hiresync.connect_links: the links made so far. */
  linkCount: () => Promise<number>;
}

/**
 * Over the partner harness `h` (acme, a partner account): `beta`, a
 * registered account whose client secret the API refuses, with a failed last
 * run of jobs (state credentials_refused); `gamma`, a registered account
 * whose credentials work (never run yet); acme in needs_reauthorization (its customer revoked the app);
 * then a worker (jobs only) serving the console with `env` added
 * (HIRESYNC_CONSOLE_PASSWORD {@link CONSOLE_PASSWORD} unless `env` says
 * otherwise), its HIRESYNC_PUBLIC_URL its own address and `publicPath`.
 */
export async function startConsoleDeployment(
  h: PartnerHarness,
  cli: (args: string[], env: Record<string, string | undefined>) => CliProcess,
  env: Record<string, string | undefined> = {},
  publicPath = '',
): Promise<ConsoleDeployment> {
  await h.store.add({
    name: 'beta',
    baseUrl: h.sim.url,
    auth: {
      mode: 'client_credentials',
      authUrl: h.sim.authUrl,
      clientId: 'beta-client',
      clientSecret: new Secret('beta-secret-the-api-refuses'),
    },
  });
  // gamma: a registered account in good standing, with the environment's accepted credentials.
  await h.store.add({
    name: 'gamma',
    baseUrl: h.sim.url,
    auth: {
      mode: 'client_credentials',
      authUrl: h.sim.authUrl,
      clientId: h.env.HIRESYNC_CLIENT_ID ?? '',
      clientSecret: new Secret(h.env.HIRESYNC_CLIENT_SECRET ?? ''),
    },
  });
  await migrateAll(h.database.db);
  const app = h.app();
  try {
    await runOnce(app, [{ account: 'beta', resource: 'jobs' }], 'full');
  } finally {
    await app.close();
  }
  // The customer revokes the partner app: acme's next refresh is refused.
  const refreshing = await h.provider();
  h.sim.revokeAuthorization('acme');
  await refreshing.getToken().catch(() => undefined);
  if ((await h.store.get('acme'))?.state !== 'needs_reauthorization') {
    throw new Error('acme was expected to need re-authorizing');
  }
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const worker = cli(['worker'], {
    ...h.env,
    HIRESYNC_HTTP_PORT: String(port),
    HIRESYNC_PUBLIC_URL: url + publicPath,
    HIRESYNC_RESOURCES: 'jobs',
    HIRESYNC_INCREMENTAL_EVERY: '1h',
    HIRESYNC_CONSOLE_PASSWORD: CONSOLE_PASSWORD,
    LOG_LEVEL: 'info',
    ...env,
  });
  await waitFor(
    async () => worker.stdout().includes('"worker started"') || worker.child.exitCode !== null,
    30_000,
  );
  if (worker.child.exitCode !== null) {
    throw new Error(
      `the worker exited ${worker.child.exitCode}: ${worker.stderr()}${worker.stdout()}`,
    );
  }
  return {
    url,
    publicUrl: url + publicPath,
    worker,
    linkCount: async () =>
      Number(
        (
          await h.database.db
            .withTables<{ 'hiresync.connect_links': { id: string } }>()
            .selectFrom('hiresync.connect_links')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
  };
}
