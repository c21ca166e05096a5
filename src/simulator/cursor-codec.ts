import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DateBound } from './date-bounds.js';

/** What a simulator cursor carries. */
export interface CursorState {
  resource: string;
  /** The walk continues with ids strictly below this one. */
  below: number;
  perPage: number;
  status?: string | undefined;
  /** The date filters of the first request (`updated_at=gte|…|lte|…`, `created_at=…`). */
  dates?: DateBound[] | undefined;
  /** The account whose data the walk reads; undefined for the simulator's first (default) account. */
  account?: string | undefined;
  /** The first request asked `active=false`: the walk lists only the inactive records. */
  inactiveOnly?: boolean | undefined;
  /** The first request asked for the rows hidden by default (`include_defaults=true`, …). */
  showHidden?: boolean | undefined;
}

/**
 * Opaque, signed, URL-safe Base64 cursors. Clients cannot forge or edit them;
 * a simulator with a new key (restarted, or `rotate()`d) rejects old ones, as
 * a real service may after a deploy.
 */
export class CursorCodec {
  #key: Buffer = randomBytes(32);

  rotate(): void {
    this.#key = randomBytes(32);
  }

  encode(state: CursorState): string {
    const fields: unknown[] = [
      state.resource,
      state.below,
      state.perPage,
      state.status ?? null,
      state.dates?.length ? state.dates : null,
    ];
    // Optional trailing fields: cursors of walks without them stay as they were.
    if (state.account !== undefined || state.inactiveOnly || state.showHidden)
      fields.push(state.account ?? null);
    if (state.inactiveOnly || state.showHidden) fields.push(state.inactiveOnly === true);
    if (state.showHidden) fields.push(true);
    const payload = Buffer.from(JSON.stringify(fields));
    const mac = createHmac('sha256', this.#key).update(payload).digest().subarray(0, 12);
    return Buffer.concat([mac, payload]).toString('base64url');
  }

  /** Returns undefined for anything malformed, forged or signed with another key. */
  decode(text: string): CursorState | undefined {
    if (!/^[A-Za-z0-9_-]+={0,2}$/.test(text)) return undefined;
    const raw = Buffer.from(text, 'base64url');
    if (raw.length < 14) return undefined;
    const mac = raw.subarray(0, 12);
    const payload = raw.subarray(12);
    const expected = createHmac('sha256', this.#key).update(payload).digest().subarray(0, 12);
    if (!timingSafeEqual(mac, expected)) return undefined;
    try {
      const [resource, below, perPage, status, dates, account, inactiveOnly, showHidden] =
        JSON.parse(payload.toString('utf8')) as [
          string,
          number,
          number,
          string | null,
          DateBound[] | null | undefined,
          string | null | undefined,
          boolean | undefined,
          boolean | undefined,
        ];
      return {
        resource,
        below,
        perPage,
        status: status ?? undefined,
        dates: dates ?? undefined,
        account: account ?? undefined,
        ...(inactiveOnly === true ? { inactiveOnly: true } : {}),
        ...(showHidden === true ? { showHidden: true } : {}),
      };
    } catch {
      return undefined;
    }
  }
}
