import { Queue, Worker } from 'bullmq';
import { keepaliveTickMs } from '../accounts/keepalive-tick.js';
import { coerceError, ReauthorizationRequiredError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { RedisConnection } from '../redis/connect.js';
import { throttledWarn } from './throttled-warn.js';

/** The queue of the partner keep-alive: one job scheduler, one job per tick. */
export const KEEPALIVE_QUEUE = 'keepalive';

/** Key of its job scheduler. */
export const KEEPALIVE_SCHEDULER = 'partner-keepalive';

/** What a keep-alive tick needs. */
export interface KeepaliveDeps {
  /** Enabled partner accounts whose last refresh passes HIRESYNC_REFRESH_KEEPALIVE before the next tick. */
  due: () => Promise<string[]>;
  /** Obtains a new access token for the account: a refresh grant, which rotates its refresh token. */
  renew: (account: string) => Promise<void>;
  logger: Logger;
}

/** One tick: renews every account due; one account's failure never stops the others'. */
export async function keepAlive(
  deps: KeepaliveDeps,
): Promise<{ renewed: string[]; failed: string[] }> {
  const renewed: string[] = [];
  const failed: string[] = [];
  for (const account of await deps.due()) {
    try {
      await deps.renew(account);
      renewed.push(account);
      deps.logger.info({ account }, 'partner authorization kept alive (refresh token rotated)');
    } catch (error) {
      failed.push(account);
      if (error instanceof ReauthorizationRequiredError) {
        deps.logger.error({ account, err: error }, 'partner account needs re-authorizing');
      } else {
        deps.logger.warn(
          { account, err: coerceError(error) },
          'partner keep-alive refresh failed; tried again at the next tick',
        );
      }
    }
  }
  return { renewed, failed };
}

/**
 * The keep-alive of partner accounts' refresh tokens, which expire when
 * unused: a BullMQ job scheduler every {@link keepaliveTickMs} (upserted by
 * every worker: one scheduler whatever their number), and a worker of
 * concurrency 1 per process running {@link keepAlive}.
 */
export async function startKeepalive(
  connection: RedisConnection,
  prefix: string,
  keepaliveMs: number,
  deps: KeepaliveDeps,
): Promise<{ close: (force?: boolean) => Promise<void> }> {
  const queue = new Queue(KEEPALIVE_QUEUE, { connection, prefix });
  queue.on('error', throttledWarn(deps.logger, 'keep-alive queue error'));
  await queue.upsertJobScheduler(
    KEEPALIVE_SCHEDULER,
    { every: keepaliveTickMs(keepaliveMs) },
    {
      name: KEEPALIVE_SCHEDULER,
      opts: { removeOnComplete: { count: 10 }, removeOnFail: { count: 10 } },
    },
  );
  const worker = new Worker(KEEPALIVE_QUEUE, async () => keepAlive(deps), {
    connection,
    prefix,
    concurrency: 1,
  });
  worker.on('error', throttledWarn(deps.logger, 'keep-alive worker error'));
  return {
    // force: BullMQ's, which waits for nothing Redis must answer (see App.close).
    close: async (force = false) => {
      await worker.close(force);
      await queue.close();
    },
  };
}
