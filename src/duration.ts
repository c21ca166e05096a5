const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses a duration such as `15m`, `30s`, `1h`, `250ms` or `1.5h` into
 * milliseconds. A bare number means seconds. Returns undefined when the text
 * is not a positive duration.
 */
export function parseDuration(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/i.exec(text);
  if (!match?.[1]) return undefined;
  const unit = (match[2] ?? 's').toLowerCase();
  const ms = Number(match[1]) * (UNIT_MS[unit] ?? 1000);
  return Number.isFinite(ms) && ms > 0 ? Math.round(ms) : undefined;
}
