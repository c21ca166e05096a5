import { afterEach, describe, expect, it, vi } from 'vitest';
import { throttledWarn } from '../../../src/queue/throttled-warn.js';
import { captureLogger } from '../../support/capture-logger.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('throttledWarn', () => {
  it('logs the first error at warn, then at most once per interval with the count it left out', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const log = captureLogger('debug');
    const warn = throttledWarn(log.logger, 'queue error', 60_000);
    for (let i = 0; i < 100; i += 1) warn(new Error('Connection is closed.'));
    expect(log.lines()).toHaveLength(1);
    vi.advanceTimersByTime(60_000);
    warn(new Error('Connection is closed.'));
    const lines = log.lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    expect(lines.map((l) => l.level)).toEqual([40, 40]);
    expect(lines[0]).toMatchObject({
      msg: 'queue error',
      err: { message: 'Connection is closed.' },
    });
    expect(lines[0]).not.toHaveProperty('suppressed');
    expect(lines[1]).toMatchObject({ msg: 'queue error', suppressed: 99 });
  });
});
