import { afterEach, describe, expect, it, vi } from 'vitest';
import { settlesBy } from '../../../src/queue/settles-by.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('settlesBy', () => {
  it('is true for work that resolves or rejects before the deadline, and leaves no timer behind', async () => {
    vi.useFakeTimers();
    expect(await settlesBy(Promise.resolve('done'), Date.now() + 1000)).toBe(true);
    expect(await settlesBy(Promise.reject(new Error('refused')), Date.now() + 1000)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('is false once the deadline passes with the work still running (a close Redis never answers)', async () => {
    vi.useFakeTimers();
    const never = new Promise(() => {});
    const waiting = settlesBy(never, Date.now() + 5000);
    await vi.advanceTimersByTimeAsync(4999);
    let result: boolean | undefined;
    void waiting.then((r) => {
      result = r;
    });
    await Promise.resolve();
    expect(result).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(await waiting).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('waits for good without a deadline', async () => {
    vi.useFakeTimers();
    let finish: () => void = () => {};
    const work = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const waiting = settlesBy(work, Number.POSITIVE_INFINITY);
    expect(vi.getTimerCount()).toBe(0);
    finish();
    expect(await waiting).toBe(true);
  });
});
