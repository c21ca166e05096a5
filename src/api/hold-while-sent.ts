/**
 * A signal that follows `outer` except while a request is on the wire: an
 * abort that arrives then takes effect once the answer is in, so a request
 * that may have changed state on the server (a refresh grant rotating its
 * token) is never cut off before its answer is read. Waits between attempts
 * (a 429's Retry-After) still end at once.
 */
export function holdWhileSent(outer: AbortSignal): {
  signal: AbortSignal;
  /** The request is about to leave: throws if the outer signal was aborted first. */
  sending: () => void;
  /** Its answer is in: an abort held meanwhile takes effect now. */
  answered: () => void;
  /** Stops following `outer`. */
  release: () => void;
} {
  const controller = new AbortController();
  let onWire = false;
  const follow = () => {
    if (!onWire) controller.abort(outer.reason);
  };
  if (outer.aborted) controller.abort(outer.reason);
  else outer.addEventListener('abort', follow, { once: true });
  return {
    signal: controller.signal,
    sending: () => {
      controller.signal.throwIfAborted();
      onWire = true;
    },
    answered: () => {
      onWire = false;
      if (outer.aborted) controller.abort(outer.reason);
    },
    release: () => outer.removeEventListener('abort', follow),
  };
}
