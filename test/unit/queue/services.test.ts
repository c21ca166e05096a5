import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  closeServices,
  type Service,
  type Stop,
  startServices,
} from '../../../src/queue/services.js';
import { captureLogger } from '../../support/capture-logger.js';

afterEach(() => {
  vi.useRealTimers();
});

/** A fake service recording its starts, closes and abandonment in `events`. */
function fake(
  name: string,
  events: string[],
  behaviour: {
    start?: () => Promise<void>;
    close?: () => Promise<void>;
    waitsPastDeadline?: boolean;
  } = {},
): Service {
  return {
    name,
    start: async () => {
      events.push(`start ${name}`);
      await behaviour.start?.();
    },
    close: async () => {
      events.push(`close ${name}`);
      await behaviour.close?.();
      events.push(`closed ${name}`);
    },
    abandon: () => events.push(`abandon ${name}`),
    ...(behaviour.waitsPastDeadline ? { waitsPastDeadline: true } : {}),
  };
}

const never = () => new Promise<void>(() => {});
const noDeadline: Stop = { deadline: Number.POSITIVE_INFINITY, force: false };

describe('closeServices', () => {
  it('closes the services one after the other, each once the one before has closed', async () => {
    const events: string[] = [];
    const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
    const services = ['keeper', 'queue worker', 'pool'].map((n) =>
      fake(n, events, { close: tick }),
    );
    const closed = await closeServices(services, noDeadline, captureLogger().logger);
    expect(events).toEqual([
      'close keeper',
      'closed keeper',
      'close queue worker',
      'closed queue worker',
      'close pool',
      'closed pool',
    ]);
    expect(closed).toEqual({ left: [], failed: [] });
  });

  it('hands each close the one stop: its deadline and whether Redis answers', async () => {
    const seen: Stop[] = [];
    const stop: Stop = { deadline: Date.now() + 60_000, force: true };
    const service = (name: string): Service => ({
      name,
      close: async (s) => {
        seen.push(s);
      },
    });
    await closeServices([service('a'), service('b')], stop, captureLogger().logger);
    expect(seen).toEqual([stop, stop]);
  });

  it('goes on when a close throws, and logs the failure with the service name', async () => {
    const events: string[] = [];
    const log = captureLogger('warn');
    const throwing: Service = {
      name: 'erasure',
      close: () => {
        throw new Error('connection is closed');
      },
    };
    const rejecting = fake('webhook deletes', events, {
      close: async () => {
        throw new Error('queue gone');
      },
    });
    const closed = await closeServices(
      [throwing, rejecting, fake('database pool', events)],
      noDeadline,
      log.logger,
    );
    expect(events).toEqual([
      'close webhook deletes',
      'close database pool',
      'closed database pool',
    ]);
    expect(closed).toEqual({ left: [], failed: ['erasure', 'webhook deletes'] });
    const lines = log.lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l.part, (l.err as { message?: string }).message])).toEqual([
      ['erasure', 'connection is closed'],
      ['webhook deletes', 'queue gone'],
    ]);
  });

  it('leaves a close that overruns the deadline, abandons that service, logs it by name and closes the rest', async () => {
    vi.useFakeTimers();
    const events: string[] = [];
    const log = captureLogger('warn');
    const closing = closeServices(
      [
        fake('schedule repair', events),
        fake('queue worker', events, { close: never }),
        fake('Redis connections', events),
      ],
      { deadline: Date.now() + 5000, force: true },
      log.logger,
    );
    await vi.advanceTimersByTimeAsync(4999);
    expect(events).toEqual([
      'close schedule repair',
      'closed schedule repair',
      'close queue worker',
    ]);
    await vi.advanceTimersByTimeAsync(1);
    expect(await closing).toEqual({ left: ['queue worker'], failed: [] });
    expect(events).toEqual([
      'close schedule repair',
      'closed schedule repair',
      'close queue worker',
      'abandon queue worker',
      'close Redis connections',
      'closed Redis connections',
    ]);
    expect(log.lines().map((l) => (JSON.parse(l) as { part: string }).part)).toEqual([
      'queue worker',
    ]);
  });

  it('gives a close after the deadline no time of its own: it is left at once', async () => {
    vi.useFakeTimers();
    const events: string[] = [];
    const deadline = Date.now() + 1000;
    const closing = closeServices(
      [fake('keep-alive', events, { close: never }), fake('erasure', events, { close: never })],
      { deadline, force: false },
      captureLogger().logger,
    );
    await vi.advanceTimersByTimeAsync(1000);
    // The second close's wait is a timer of 0 ms (node's 1 ms), not a grace of its own.
    await vi.advanceTimersByTimeAsync(1);
    expect(await closing).toEqual({ left: ['keep-alive', 'erasure'], failed: [] });
  });

  it('waits past the deadline for a service that bounds itself (a refresh grant on the wire)', async () => {
    vi.useFakeTimers();
    const events: string[] = [];
    let answer: () => void = () => {};
    const grant = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const closing = closeServices(
      [
        fake('refresh grants', events, { close: () => grant, waitsPastDeadline: true }),
        fake('database pool', events),
      ],
      { deadline: Date.now() + 1000, force: false },
      captureLogger().logger,
    );
    await vi.advanceTimersByTimeAsync(5000);
    expect(events).toEqual(['close refresh grants']);
    answer();
    expect(await closing).toEqual({ left: [], failed: [] });
    expect(events).toEqual([
      'close refresh grants',
      'closed refresh grants',
      'close database pool',
      'closed database pool',
    ]);
  });
});

describe('startServices', () => {
  it('starts the services in order', async () => {
    const events: string[] = [];
    await startServices(
      ['HTTP listeners', 'queue worker', 'schedule repair'].map((n) => fake(n, events)),
      () => noDeadline,
      captureLogger().logger,
    );
    expect(events).toEqual(['start HTTP listeners', 'start queue worker', 'start schedule repair']);
  });

  it('when one fails to start, closes those already started in reverse order and throws its error', async () => {
    const events: string[] = [];
    const refused = new Error('listen EADDRINUSE');
    const stops: Stop[] = [];
    const starting = startServices(
      [
        fake('HTTP listeners', events),
        fake('queue worker', events),
        fake('erasure', events, {
          start: async () => {
            throw refused;
          },
        }),
        fake('schedule repair', events),
      ],
      () => {
        const stop = { deadline: Number.POSITIVE_INFINITY, force: false };
        stops.push(stop);
        return stop;
      },
      captureLogger().logger,
    );
    await expect(starting).rejects.toBe(refused);
    expect(events).toEqual([
      'start HTTP listeners',
      'start queue worker',
      'start erasure',
      'close queue worker',
      'closed queue worker',
      'close HTTP listeners',
      'closed HTTP listeners',
    ]);
    expect(stops).toHaveLength(1);
  });
});
