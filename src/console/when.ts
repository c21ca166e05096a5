/**
 * An ISO 8601 UTC timestamp as the console shows it, to the second:
 * `2026-05-01 12:00:05 UTC`; undefined for none.
 */
export function when(iso: string | null | undefined): string | undefined {
  if (!iso) return undefined;
  const match = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)/.exec(iso);
  return match ? `${match[1]} ${match[2]} UTC` : iso;
}
