import type { CursorCodec } from './cursor-codec.js';
import type { SimResource } from './dataset.js';
import { DATE_FILTER_FIELDS, DATE_FILTER_OPERATORS, type DateBound } from './date-bounds.js';
import { SHOW_HIDDEN_PARAMETER } from './world/world.js';

/** Where a list request's walk stands and what it filters. */
export interface ListQuery {
  /** The page holds ids strictly below this one (the first page: every id). */
  below: number;
  perPage: number;
  /** The `status` filter. */
  status: string | undefined;
  /**
   * The date filters (`updated_at=gte|A|lte|B`, `created_at=…`): a record
   * passes when it is within every bound. Empty: no filter.
   */
  dates: DateBound[];
  /** `active=false`: the walk lists the inactive records hidden by default (job posts, when hidden). */
  inactiveOnly: boolean;
  /**
   * The walk lists the rows the live service hides by default (built-in
   * rejection reasons with `include_defaults=true`, service users with
   * `show_service_accounts=true`); absent when not asked.
   */
  showHidden?: true;
}

/** A list request that breaks a rule: the `errors` of its 422. */
export interface ListQueryRefusal {
  errors: unknown[];
}

/**
 * Reads a list request's query: the state of its cursor (which must come
 * alone, be valid, and belong to `resource` and `cursorAccount`), or the
 * first page's `per_page`, `status`, `updated_at`, `created_at` and `active` parameters.
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
    const { below, perPage, status, dates } = state;
    return {
      below,
      perPage,
      status,
      dates: dates ?? [],
      inactiveOnly: state.inactiveOnly === true,
      ...(state.showHidden ? { showHidden: true as const } : {}),
    };
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
  // Pipe-delimited date filters, as v3 takes them (peers send updated_at=gte|<ISO 8601>).
  const dates: DateBound[] = [];
  for (const field of DATE_FILTER_FIELDS) {
    const text = url.searchParams.get(field);
    if (text === null) continue;
    const bounds = readDateBounds(field, text);
    if (!bounds)
      return {
        errors: [
          {
            [field]:
              'must be OP|<ISO 8601 timestamp>, OP one of gte, lte, gt, lt, and may be repeated (gte|A|lte|B)',
          },
        ],
      };
    dates.push(...bounds);
  }
  const inactiveOnly = url.searchParams.get('active') === 'false';
  const hiddenParameter = SHOW_HIDDEN_PARAMETER[resource];
  const showHidden =
    hiddenParameter !== undefined && url.searchParams.get(hiddenParameter) === 'true';
  return {
    below: Number.POSITIVE_INFINITY,
    perPage,
    status,
    dates,
    inactiveOnly,
    ...(showHidden ? { showHidden: true as const } : {}),
  };
}

/** The bounds of `field=OP|TIME[|OP|TIME…]`, or undefined when the text breaks that form. */
function readDateBounds(field: DateBound['field'], text: string): DateBound[] | undefined {
  const parts = text.split('|');
  if (parts.length % 2 !== 0) return undefined;
  const bounds: DateBound[] = [];
  for (let i = 0; i < parts.length; i += 2) {
    const op = parts[i] as DateBound['op'];
    const at = parts[i + 1] ?? '';
    if (!DATE_FILTER_OPERATORS.includes(op) || Number.isNaN(Date.parse(at))) return undefined;
    bounds.push({ field, op, at });
  }
  return bounds;
}
