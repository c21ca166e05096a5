import { coerceError } from '../errors.js';
import type { Logger } from '../logger.js';
import { settlesBy } from './settles-by.js';

/** How the services are closed: one deadline for all of them. */
export interface Stop {
  /**
   * When (epoch milliseconds) to stop waiting for a service's close: a Redis
   * that no longer answers leaves BullMQ's close, and a run's checkpoint,
   * waiting for good. Infinity waits for each.
   */
  deadline: number;
  /** Redis does not answer: BullMQ's force close, which waits for nothing Redis must answer. */
  force: boolean;
}

/**
 * One part of a process that runs until it is closed: a queue worker, a
 * scheduler, the HTTP listeners, the database pool.
 */
export interface Service {
  /** In the logs, and in what a close left: `queue worker`, `erasure`, `database pool`. */
  readonly name: string;
  /** Starts it; a start that fails undoes its own part. None: it started when it was made. */
  start?: () => Promise<void> | void;
  /** Stops it and resolves once it has stopped. */
  close: (stop: Stop) => Promise<void>;
  /** Drops it as it is once its close has overrun the deadline (its sockets may never close either). */
  abandon?: () => void;
  /** Bounded by a timeout of its own (a refresh grant on the wire): waited for even past the deadline. */
  readonly waitsPastDeadline?: boolean;
}

/** What a close of services did not do. */
export interface ClosedServices {
  /** The services still closing at the deadline, left as they are. */
  left: string[];
  /** The services whose close threw (logged with their error). */
  failed: string[];
}

/**
 * Closes `services` one after the other in the order given, each awaited
 * until `stop.deadline` at the latest: a close that throws or overruns is
 * logged with the service's name and the next one is closed all the same.
 */
export async function closeServices(
  services: readonly Service[],
  stop: Stop,
  logger: Logger,
): Promise<ClosedServices> {
  const closed: ClosedServices = { left: [], failed: [] };
  for (const service of services) {
    const closing = (async () => service.close(stop))().then(
      () => undefined,
      (error: unknown) => coerceError(error),
    );
    const by = service.waitsPastDeadline ? Number.POSITIVE_INFINITY : stop.deadline;
    if (!(await settlesBy(closing, by))) {
      closed.left.push(service.name);
      service.abandon?.();
      logger.warn({ part: service.name }, 'still closing at the deadline: left as it is');
      continue;
    }
    const error = await closing;
    if (error) {
      closed.failed.push(service.name);
      logger.warn({ part: service.name, err: error }, 'could not close; closing the others');
    }
  }
  return closed;
}

/**
 * Starts `services` in order. When one fails to start, the ones already
 * started are closed in the reverse order (against `stop()`'s deadline) and
 * the start's error is thrown.
 */
export async function startServices(
  services: readonly Service[],
  stop: () => Stop,
  logger: Logger,
): Promise<void> {
  const started: Service[] = [];
  for (const service of services) {
    try {
      await service.start?.();
    } catch (error) {
      await closeServices(started.reverse(), stop(), logger);
      throw error;
    }
    started.push(service);
  }
}
