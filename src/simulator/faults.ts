import type { ServerResponse } from 'node:http';
import { createGzip } from 'node:zlib';
import { mix } from './dataset-values.js';
import type { RetryAfterFormat } from './rate-limiter.js';

/** A one-shot fault, applied to the next list request(s). */
export type Fault =
  | { kind: 'status'; status: number }
  /** 429; `epoch` sends Unix epoch seconds (now + retryAfterS), as some APIs do. */
  | { kind: 'rate-limit'; retryAfterS: number; format?: RetryAfterFormat }
  | { kind: 'malformed-body' }
  | { kind: 'next-origin'; origin: string }
  | { kind: 'self-next' }
  /** The next link points back at the previous list request's target (a B → C → B loop). */
  | { kind: 'previous-next' }
  /**
   * A 200 whose JSON body (`[{},{},…]`) is `bytes` long, streamed without
   * holding it; `gzip` sends it compressed (a small transfer that expands),
   * `declareLength` (default true without gzip) sends its content-length.
   */
  | { kind: 'oversized-body'; bytes: number; gzip?: boolean; declareLength?: boolean }
  | { kind: 'delay'; ms: number }
  | { kind: 'drop-connection' };

/** Faults drawn at random on list requests, by probability (0..1). For soaks. */
export interface RandomFaults {
  serverError?: number;
  rateLimit?: number;
  slow?: number;
  slowMs?: number;
  dropConnection?: number;
  revokeTokens?: number;
  seed?: number;
}

/**
 * The faults of list requests: the shared queue of injected ones (each
 * account has its own queue too, served first), the seeded draws of
 * {@link RandomFaults}, and the count of each kind applied.
 */
export class Faults {
  readonly #shared: Fault[] = [];
  readonly #counts: Record<string, number>;
  #random: number;

  /** `counts` is the live record the simulator reports as `faultsInjected`. */
  constructor(random: RandomFaults | undefined, counts: Record<string, number>) {
    this.#random = random?.seed ?? 7;
    this.#counts = counts;
  }

  /** Queues `fault` for the next `times` list requests, in `queue` (an account's) or the shared one. */
  inject(fault: Fault, times: number, queue: Fault[] = this.#shared): void {
    for (let i = 0; i < times; i += 1) queue.push(fault);
  }

  /** The fault for a list request: the next of the account's `queue`, else the next shared one. */
  next(queue: Fault[]): Fault | undefined {
    return queue.shift() ?? this.#shared.shift();
  }

  /** Counts a fault of `kind` applied. */
  count(kind: string): void {
    this.#counts[kind] = (this.#counts[kind] ?? 0) + 1;
  }

  /** A seeded draw: true with `probability`; no draw when it is 0 or undefined. */
  chance(probability: number | undefined): boolean {
    if (!probability) return false;
    this.#random = mix(this.#random, 0x51ed);
    return this.#random / 0x1_0000_0000 < probability;
  }
}

/**
 * Streams an oversized `[{},{},…]` body of `fault.bytes` bytes (before
 * compression) in 64 KiB pieces, honouring backpressure, and stops when the
 * client hangs up, so the simulator never holds the body itself.
 */
export async function sendOversized(
  res: ServerResponse,
  fault: Extract<Fault, { kind: 'oversized-body' }>,
  headers: Record<string, string>,
): Promise<void> {
  const piece = Buffer.from('{},'.repeat(21_845));
  // `[` and k elements `{}` with k - 1 commas and a closing `]`: 3k + 1 bytes.
  const elements = Math.max(1, Math.floor((fault.bytes - 1) / 3));
  const total = 3 * elements + 1;
  const head: Record<string, string | number> = {
    'content-type': 'application/json; charset=utf-8',
    ...headers,
  };
  if (fault.gzip) head['content-encoding'] = 'gzip';
  else if (fault.declareLength ?? true) head['content-length'] = total;
  res.writeHead(200, head);
  const gzip = fault.gzip ? createGzip({ level: 9 }) : undefined;
  gzip?.pipe(res);
  const out: NodeJS.WritableStream = gzip ?? res;
  let closed = false;
  res.once('close', () => {
    closed = true;
    gzip?.destroy();
  });
  const write = async (chunk: Buffer): Promise<void> => {
    if (closed) return;
    if (!out.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          out.removeListener('drain', done);
          res.removeListener('close', done);
          resolve();
        };
        out.once('drain', done);
        res.once('close', done);
      });
    }
  };
  await write(Buffer.from('['));
  let left = 3 * elements;
  while (left > 0 && !closed) {
    const n = Math.min(left, piece.length);
    left -= n;
    // The last element's comma becomes the closing bracket.
    if (left === 0) await write(Buffer.concat([piece.subarray(0, n - 1), Buffer.from(']')]));
    else await write(piece.subarray(0, n));
  }
  if (closed) return;
  out.end();
}
