/** The list fields a date filter may name. */
export const DATE_FILTER_FIELDS = ['updated_at', 'created_at'] as const;
/** The operators of a pipe-delimited date filter. */
export const DATE_FILTER_OPERATORS = ['gte', 'lte', 'gt', 'lt'] as const;

/** One bound of a date filter: `updated_at=gte|2024-01-01T00:00:00Z` is `{ updated_at, gte, … }`. */
export interface DateBound {
  field: (typeof DATE_FILTER_FIELDS)[number];
  op: (typeof DATE_FILTER_OPERATORS)[number];
  /** An ISO 8601 time as the request gave it. */
  at: string;
}

/**
 * An ISO 8601 time in microseconds since the epoch, so that times of the
 * same millisecond still compare (records carry microseconds).
 */
export function epochMicros(iso: string): number {
  const ms = Date.parse(iso);
  const fraction = /T[\d:]+\.(\d+)/.exec(iso)?.[1] ?? '';
  return ms * 1000 + Number(fraction.slice(3, 6).padEnd(3, '0'));
}

/** Whether a record of times `times` is within every bound of `dates`. */
export function withinDates(
  times: Readonly<Record<DateBound['field'], string>>,
  dates: readonly DateBound[],
): boolean {
  return dates.every(({ field, op, at }) => {
    const value = epochMicros(times[field]);
    const bound = epochMicros(at);
    return op === 'gte'
      ? value >= bound
      : op === 'lte'
        ? value <= bound
        : op === 'gt'
          ? value > bound
          : value < bound;
  });
}
