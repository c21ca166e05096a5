/** The request headers {@link crossOriginRefusal} reads (Node's lowercase names). */
export interface OriginHeaders {
  origin?: string | undefined;
  host?: string | undefined;
  'sec-fetch-site'?: string | string[] | undefined;
}

function originOf(url: string): string | undefined {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

/**
 * The origins a form of the console is sent from: that of `publicUrl`
 * (HIRESYNC_PUBLIC_URL) when set, and the request's own `Host` over http or
 * https (an operator reaching a worker directly, or through a TLS proxy that
 * passes the Host on).
 */
export function consoleOrigins(host: string | undefined, publicUrl: string | undefined): string[] {
  const origins = new Set<string>();
  const pub = publicUrl === undefined ? undefined : originOf(publicUrl);
  if (pub) origins.add(pub);
  if (host && /^[A-Za-z0-9.:[\]-]+$/.test(host)) {
    for (const scheme of ['http', 'https']) {
      const origin = originOf(`${scheme}://${host}`);
      if (origin) origins.add(origin);
    }
  }
  return [...origins];
}

/**
 * Why a POST to the console is refused as not sent by the console itself, or
 * undefined. The browser's `Sec-Fetch-Site`, when sent, must say
 * `same-origin`; its `Origin`, when sent, must be one of
 * {@link consoleOrigins}, or `null` with `Sec-Fetch-Site: same-origin`: the
 * console's pages send no referrer (Referrer-Policy: no-referrer), and a
 * browser then sends their forms' Origin as `null`. Both headers are set by
 * the browser alone; a page cannot forge them. (A request with neither is
 * left to the form's token, which every POST needs as well.)
 */
export function crossOriginRefusal(
  headers: OriginHeaders,
  publicUrl: string | undefined,
): string | undefined {
  const { origin } = headers;
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') {
    const from = origin === undefined ? '' : `Origin ${origin.slice(0, 200)}, `;
    return `it was sent from another site (${from}Sec-Fetch-Site ${String(site).slice(0, 50)}), not from this console`;
  }
  if (origin === undefined) return undefined;
  if (origin === 'null') {
    return site === 'same-origin'
      ? undefined
      : 'it was sent from an anonymous page (Origin null, and no Sec-Fetch-Site: same-origin), not from this console';
  }
  const given = originOf(origin);
  if (given && consoleOrigins(headers.host, publicUrl).includes(given)) return undefined;
  return `it was sent from another site (Origin ${origin.slice(0, 200)}), not from this console`;
}
