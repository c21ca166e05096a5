/**
 * `name` as a quoted SQL identifier: `tracking_links` → `"tracking_links"`,
 * a double quote inside doubled. The statements of this folder vary only in
 * the identifiers it quotes; every value goes as a `$n` parameter.
 */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
