import type { IncomingMessage, ServerResponse } from 'node:http';

/** Token endpoint responses are never cached (RFC 6749 5.1). */
export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** Writes `body` as a JSON response with its content-length, then `headers`. */
export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** The API's 422: `errors` says which rule the request broke. */
export function unprocessable(
  res: ServerResponse,
  errors: unknown[],
  headers: Record<string, string> = {},
): void {
  json(res, 422, { message: 'Unprocessable Content', errors }, headers);
}

/** The user name and password of an HTTP Basic `authorization` header. */
export function basicCredentials(req: IncomingMessage): [string, string] | undefined {
  const header = req.headers.authorization;
  if (!header?.startsWith('Basic ')) return undefined;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : [decoded.slice(0, colon), decoded.slice(colon + 1)];
}

/** The whole request body, as UTF-8. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
