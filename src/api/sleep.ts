/** The longest delay a Node.js timer holds; a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Waits `ms` milliseconds, in pieces a timer can hold, and rejects with the
 * signal's reason as soon as it is aborted.
 */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  let left = Math.max(0, ms);
  do {
    const step = Math.min(left, MAX_TIMER_MS);
    await delay(step, signal);
    left -= step;
  } while (left > 0);
}

/** Settles as `promise` does, or rejects with the signal's reason as soon as it is aborted. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
