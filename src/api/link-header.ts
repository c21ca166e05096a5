import { parseLinkHeader } from 'got';
import { UnexpectedBodyError } from '../errors.js';
import { excerpt } from '../secret.js';

function unquote(value: string): string {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    return value.slice(1, -1).replace(/\\(.)/g, '$1');
  }
  return value;
}

/**
 * Finds the target of the `rel="next"` link in a `Link` header (RFC 8288):
 * quoted or bare rel, several relation types in one rel, several links,
 * parameters in any order. Returns undefined when the header is absent, empty
 * or has no next link (the page is the last one). An absolute target is
 * returned exactly as sent; a relative one is resolved against `requestUrl`.
 *
 * @throws UnexpectedBodyError when the header cannot be parsed: treating it as
 *   "last page" would silently end the walk early.
 */
export function findNextLink(
  header: string | readonly string[] | undefined,
  requestUrl: string,
): string | undefined {
  const text = Array.isArray(header) ? header.join(', ') : (header as string | undefined);
  if (text === undefined || text.trim() === '') return undefined;
  let links: ReturnType<typeof parseLinkHeader>;
  try {
    links = parseLinkHeader(text);
  } catch (error) {
    throw new UnexpectedBodyError(
      `malformed Link header from ${new URL(requestUrl).pathname}: ${excerpt(text, 200)}`,
      {
        cause: error,
      },
    );
  }
  for (const link of links) {
    const rel = link.parameters.rel;
    if (rel === undefined) continue;
    const types = unquote(rel).toLowerCase().split(/\s+/);
    if (!types.includes('next')) continue;
    if (/^[a-z][a-z0-9+.-]*:/i.test(link.reference)) return link.reference;
    return new URL(link.reference, requestUrl).href;
  }
  return undefined;
}
