/**
 * Waits for `work` to settle (resolved or rejected: either ends the wait) until
 * `deadline` (epoch milliseconds) at the latest. Resolves true when it settled
 * in time, false when the deadline came first; `work` is then left running.
 * The timer never outlives the wait. An infinite deadline waits for good.
 */
export async function settlesBy(work: Promise<unknown>, deadline: number): Promise<boolean> {
  const settled = work.then(
    () => true,
    () => true,
  );
  if (deadline === Number.POSITIVE_INFINITY) return settled;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}
