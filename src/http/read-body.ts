import type { IncomingMessage } from 'node:http';
import type { BodyAllowance } from './body-budget.js';

/** What {@link readBody} read, or why it stopped. */
export type BodyRead =
  | { ok: true; body: Buffer }
  /** Longer than the bound: by its Content-Length (nothing read), or once read past it. */
  | { ok: false; reason: 'too large' }
  /** The allowance had not the bytes: by its Content-Length (nothing read), or once read past them. */
  | { ok: false; reason: 'busy' }
  /** Not all sent within the timeout. */
  | { ok: false; reason: 'timeout' }
  /** The client went away (or the stream failed) before the end. */
  | { ok: false; reason: 'aborted' };

/** Options of {@link readBody}. */
export interface ReadBodyOptions {
  /** Most bytes read; a longer body is refused. */
  maxBytes: number;
  /** How long the whole body may take to arrive. */
  timeoutMs: number;
  /**
   * The bytes the body may hold (a share of a BodyBudget): its
   * Content-Length is taken before a byte is read, else each chunk as it
   * comes; what cannot be taken stops the read (`busy`). The caller releases it.
   */
  allowance?: BodyAllowance;
}

/**
 * Reads a request's body, bounded in size and time: a Content-Length above
 * `maxBytes` is refused before a byte is read, and a body that turns out
 * longer (chunked) is refused as soon as it passes the bound; the same for
 * the bytes `allowance` has left. The rest is left unread (see
 * {@link discardRest}). Resolves, never rejects.
 */
export function readBody(req: IncomingMessage, options: ReadBodyOptions): Promise<BodyRead> {
  const declared = Number(req.headers['content-length']);
  const known = req.headers['content-length'] !== undefined && Number.isFinite(declared);
  if (known && declared > options.maxBytes) {
    return Promise.resolve({ ok: false, reason: 'too large' });
  }
  const { allowance } = options;
  // Bytes of the allowance this body holds: its whole declared length, up front.
  let held = 0;
  if (allowance && known) {
    if (!allowance.take(declared)) return Promise.resolve({ ok: false, reason: 'busy' });
    held = declared;
  }
  return new Promise<BodyRead>((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: BodyRead) => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAborted);
      req.off('close', onClose);
      if (!result.ok) req.pause();
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > options.maxBytes) return finish({ ok: false, reason: 'too large' });
      if (allowance && size > held) {
        if (!allowance.take(size - held)) return finish({ ok: false, reason: 'busy' });
        held = size;
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish({ ok: true, body: Buffer.concat(chunks, size) });
    const onAborted = () => finish({ ok: false, reason: 'aborted' });
    const onClose = () => {
      if (!req.complete) onAborted();
    };
    const timer = setTimeout(() => finish({ ok: false, reason: 'timeout' }), options.timeoutMs);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAborted);
    req.on('close', onClose);
  });
}

/** Options of {@link discardRest}. */
export interface DiscardOptions {
  /** Most bytes discarded before the refusal is answered anyway (and the connection closed). */
  maxBytes: number;
  /** Longest time given to the rest to arrive before the refusal is answered anyway. */
  timeoutMs: number;
}

/**
 * Before a refusal is answered: what the client still sends of a refused body
 * is read and dropped (never kept), for at most `timeoutMs` and `maxBytes`.
 * Resolves true when the body ended within those bounds, false otherwise.
 * Answered while the client still sends, the answer races the reset the
 * kernel sends once the server closes with bytes unread (Node's server closes
 * as soon as the answer is out when the client asked `Connection: close`),
 * and the client may see only the reset.
 */
export function discardRest(req: IncomingMessage, options: DiscardOptions): Promise<boolean> {
  if (req.complete) return Promise.resolve(true);
  return new Promise<boolean>((resolve) => {
    let dropped = 0;
    const done = (ended: boolean) => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      resolve(ended);
    };
    const onData = (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > options.maxBytes) done(false);
    };
    const onEnd = () => done(true);
    const onClose = () => done(req.complete);
    const timer = setTimeout(() => done(false), options.timeoutMs);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onClose);
    req.resume();
  });
}
