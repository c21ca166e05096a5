import type { CursorCodec } from './cursor-codec.js';
import type { SimResource } from './dataset.js';

/** Where a list request's walk stands and what it filters. */
export interface ListQuery {
  /** The page holds ids strictly below this one (the first page: every id). */
  below: number;
  perPage: number;
  /** The `status` filter. */
  status: string | undefined;
  /** The `updated_at=gte|…` filter: records updated at or after it. */
  updatedSince: string | undefined;
  /** `active=false`: the walk lists the inactive records hidden by default (job posts, when hidden). */
  inactiveOnly: boolean;
}

/** A list request that breaks a rule: the `errors` of its 422. */
export interface ListQueryRefusal {
  errors: unknown[];
}

/**
 * Reads a list request's query: the state of its cursor (which must come
 * alone, be valid, and belong to `resource` and `cursorAccount`), or the
 * first page's `per_page`, `status`, `updated_at` and `active` parameters.
 */
export function readListQuery(
  url: URL,
  resource: SimResource,
  cursorAccount: string | undefined,
  cursors: CursorCodec,
): ListQuery | ListQueryRefusal {
  const params = [...url.searchParams.keys()];
  const cursorText = url.searchParams.get('cursor');
  if (cursorText !== null) {
    if (params.length > 1)
      return { errors: ['No other query parameters may be provided with a cursor'] };
    const state = cursors.decode(cursorText);
    if (!state || state.resource !== resource || state.account !== cursorAccount)
      return { errors: ['The cursor is malformed or invalid'] };
    const { below, perPage, status, updatedSince } = state;
    return { below, perPage, status, updatedSince, inactiveOnly: state.inactiveOnly === true };
  }
  let perPage = 100;
  const perPageText = url.searchParams.get('per_page');
  if (perPageText !== null) {
    const n = Number(perPageText);
    if (!/^\d+$/.test(perPageText) || n < 1 || n > 500) {
      return {
        errors: [
          {
            per_page:
              n > 500 ? 'must be less than or equal to 500' : 'must be an integer from 1 to 500',
          },
        ],
      };
    }
    perPage = n;
  }
  // The spec shows a status filter on jobs; the simulator applies one to any list.
  const status = url.searchParams.get('status') ?? undefined;
  // The filter peers send for incremental syncs (Singer's tap-greenhouse):
  // updated_at=gte|<ISO 8601>.
  let updatedSince: string | undefined;
  const updated = url.searchParams.get('updated_at');
  if (updated !== null) {
    const since = /^gte\|(.+)$/.exec(updated)?.[1];
    if (since === undefined || Number.isNaN(Date.parse(since)))
      return { errors: [{ updated_at: 'must be gte|<ISO 8601 timestamp>' }] };
    updatedSince = since;
  }
  const inactiveOnly = url.searchParams.get('active') === 'false';
  return { below: Number.POSITIVE_INFINITY, perPage, status, updatedSince, inactiveOnly };
}
