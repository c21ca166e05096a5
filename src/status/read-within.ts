/** How long a scrape waits for Postgres or Redis before it gives up on a read. */
const READ_TIMEOUT_MS = 3000;

/**
 * `work`'s value, or undefined when it fails or takes longer than
 * {@link READ_TIMEOUT_MS}: a scrape of /metrics never waits on a store that
 * does not answer.
 */
export async function readWithin<T>(work: () => Promise<T | undefined>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work(),
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), READ_TIMEOUT_MS);
      }),
    ]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
