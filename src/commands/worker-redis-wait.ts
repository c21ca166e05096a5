import type { Config } from '../config/types.js';
import { startNotReadyServer } from '../http/server.js';
import type { Logger } from '../logger.js';
import { RedisTlsError } from '../redis/tls-failure.js';
import { confirmRedisDatabase } from '../status/preflight.js';
import type { Signals } from './command.js';

/** How often a worker whose Redis TLS does not verify tries again. */
export const REDIS_TLS_RETRY_MS = 10_000;

/**
 * The worker's first check of Redis (see confirmRedisDatabase). When Redis's
 * TLS does not verify (REDIS_CA_FILE, or REDIS_URL's scheme: a
 * {@link RedisTlsError}), the worker neither exits, which a supervisor would
 * restart in a loop, nor goes on in plain text: it logs why once (again only
 * when the reason changes), answers /healthz 503 with the reason on
 * HIRESYNC_HTTP_PORT, and tries again every {@link REDIS_TLS_RETRY_MS}, so a
 * certificate or CA put right on the server's side is taken up. Resolves true
 * once Redis verifies, false on SIGTERM/SIGINT first. Any other failure is
 * thrown, as before.
 */
export async function confirmRedisOrWait(
  config: Config,
  logger: Logger,
  signals: Signals,
): Promise<boolean> {
  let reason: string;
  try {
    await confirmRedisDatabase(config.redis);
    return true;
  } catch (error) {
    if (!(error instanceof RedisTlsError)) throw error;
    reason = tlsReason(error);
  }
  const server = await startNotReadyServer(config.listeners.http, () => reason);
  // A signal that comes after the wait resolves nothing anyone awaits.
  const stopped = new Promise<false>((resolve) => {
    signals.once('SIGINT', () => resolve(false));
    signals.once('SIGTERM', () => resolve(false));
  });
  const log = () =>
    logger.error(
      { port: server.port, retryInSeconds: REDIS_TLS_RETRY_MS / 1000 },
      `not ready: ${reason}`,
    );
  log();
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const retry = new Promise<true>((resolve) => {
        timer = setTimeout(() => resolve(true), REDIS_TLS_RETRY_MS);
      });
      const again = await Promise.race([retry, stopped]);
      clearTimeout(timer);
      if (!again) return false;
      try {
        await confirmRedisDatabase(config.redis);
        logger.info('Redis TLS verifies now: starting');
        return true;
      } catch (error) {
        if (!(error instanceof RedisTlsError)) throw error;
        const now = tlsReason(error);
        if (now !== reason) {
          reason = now;
          log();
        }
      }
    }
  } finally {
    await server.close();
  }
}

function tlsReason(error: RedisTlsError): string {
  return error.problems.map((p) => `${p.variable}: ${p.message}`).join('; ');
}
