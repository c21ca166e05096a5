import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { coerceError } from '../errors.js';
import { redactSecrets, type Secret } from '../secret.js';
import type { StatusReport } from '../status/report-types.js';
import { CONSOLE_CHALLENGE, isConsoleLogin } from './basic-auth.js';
import { checkFormToken, createFormToken, formTokenKeys } from './form-token.js';
import { parseConsoleQuery } from './overview-query.js';
import { messagePage, sendConsolePage } from './page-shell.js';
import { renderConsole } from './render-console.js';
import { crossOriginRefusal } from './same-origin.js';

/** Largest form body the console reads: it has two short fields. */
const MAX_FORM_BYTES = 4096;

/** A connect link the console made: the URL to send, and when it stops working. */
export interface MadeLink {
  account: string;
  url: string;
  expiresAt: string;
  /** The account's older unused links it withdrew. */
  withdrawn: number;
}

/** How the console makes connect links. */
export interface ConsoleLinks {
  /** Why no link can be made by this deployment (what to set), or undefined when links can be made. */
  unavailable: string | undefined;
  /**
   * A new connect link for `account`, which must be a registered partner
   * account in state needs_reauthorization; throws a HiresyncError saying
   * why not otherwise (nothing made).
   */
  create(account: string): Promise<MadeLink>;
}

/** What the console at `/` of the worker's HTTP server needs. */
export interface ConsoleOptions {
  /** HIRESYNC_CONSOLE_PASSWORD (user `hiresync`). */
  password: Secret;
  /** The keys of HIRESYNC_SECRET_KEY (the form tokens are signed under them); may be empty. */
  secretKeys: readonly Buffer[];
  /** HIRESYNC_PUBLIC_URL, when set: its origin is the console's. */
  publicUrl: string | undefined;
  /** The data of the page: what `status --json` prints. */
  readReport: () => Promise<StatusReport>;
  links: ConsoleLinks;
  logger: Logger;
  /** The clock of the form tokens; default Date.now. */
  now?: () => number;
}

/** What `/` answers when HIRESYNC_CONSOLE_PASSWORD is unset. */
export const CONSOLE_OFF =
  'not found: the console is off; set HIRESYNC_CONSOLE_PASSWORD (12 characters or more) to serve it here, user hiresync (see docs/console.md)\n';

/**
 * Whether `path` (without its query) is the console's: `/`, or the path of
 * HIRESYNC_PUBLIC_URL with a trailing slash (`/hiresync/` for
 * `https://ops.example.com/hiresync`), which a reverse proxy may pass on
 * rather than strip. The pages link and post relative to it.
 */
export function isConsolePath(path: string, publicUrl: string | undefined): boolean {
  if (path === '/') return true;
  if (publicUrl === undefined) return false;
  const prefix = new URL(publicUrl).pathname.replace(/\/+$/, '');
  return prefix !== '' && path === `${prefix}/`;
}

/** Reads a form body of at most {@link MAX_FORM_BYTES}; undefined when it is longer. */
async function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) return undefined;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/**
 * Serves the console at `/`: GET renders it (behind HTTP Basic), POST makes a
 * connect link for an account that needs re-authorizing, but only when the
 * request comes from the console itself (same origin, and the token of a form
 * the console rendered within the hour); anything else changes nothing.
 * Without `options` the console is off: 404 saying how to turn it on.
 */
export async function serveConsole(
  req: IncomingMessage,
  res: ServerResponse,
  options: ConsoleOptions | undefined,
): Promise<void> {
  if (!options) {
    res.writeHead(404, {
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'no-store',
    });
    res.end(CONSOLE_OFF);
    return;
  }
  const password = options.password.reveal();
  if (!isConsoleLogin(req.headers.authorization, password)) {
    // Drain a POST's body so the connection can be reused for the retry.
    req.resume();
    sendConsolePage(
      res,
      401,
      messagePage('Log in to the hiresync console', [
        'User hiresync, and the password in HIRESYNC_CONSOLE_PASSWORD.',
      ]),
      { 'www-authenticate': CONSOLE_CHALLENGE },
    );
    return;
  }
  const now = options.now ?? Date.now;
  const keys = formTokenKeys(password, options.secretKeys);
  // Which page: ?account=NAME, or the overview's ?name=…&state=…&page=N (docs/console.md).
  const query = parseConsoleQuery(new URL(req.url ?? '/', 'http://console').searchParams);
  if ('invalid' in query) {
    req.resume();
    sendConsolePage(
      res,
      400,
      messagePage('This page of the console does not exist', [
        `Nothing is shown: ${query.invalid}.`,
      ]),
    );
    return;
  }
  const render = async (status: number, view: { made?: MadeLink; refusal?: string }) => {
    let report: StatusReport;
    try {
      report = await options.readReport();
    } catch (error) {
      const message = redactSecrets(coerceError(error).message);
      options.logger.error({ err: error }, 'cannot read the status');
      sendConsolePage(
        res,
        503,
        messagePage('The status cannot be read', [
          message,
          'Check that Postgres and Redis answer (GET /healthz), then reload.',
        ]),
      );
      return;
    }
    const rendered = renderConsole(
      report,
      {
        formToken: createFormToken(keys, now()),
        linksUnavailable: options.links.unavailable,
        ...view,
      },
      query,
    );
    sendConsolePage(res, rendered.status === 200 ? status : rendered.status, rendered.page);
  };

  if (req.method === 'GET' || req.method === 'HEAD') {
    await render(200, {});
    return;
  }
  if (req.method !== 'POST') {
    req.resume();
    sendConsolePage(
      res,
      405,
      messagePage('Method not allowed', ['The console answers GET, and POST from its own form.']),
      { allow: 'GET, HEAD, POST' },
    );
    return;
  }
  const refuse = (status: number, why: string) => {
    options.logger.warn({ status, reason: why }, 'connect link refused');
    sendConsolePage(
      res,
      status,
      messagePage('Refused: no connect link was made', [
        why,
        'Open the console and press the button there.',
      ]),
    );
  };
  const crossOrigin = crossOriginRefusal(req.headers, options.publicUrl);
  if (crossOrigin) {
    req.resume();
    refuse(403, `This request was refused because ${crossOrigin}.`);
    return;
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    req.resume();
    refuse(415, 'The console takes only its own form (application/x-www-form-urlencoded).');
    return;
  }
  const form = await readForm(req);
  if (!form) {
    refuse(413, 'The form is larger than the console’s own.');
    return;
  }
  const token = checkFormToken(form.get('token') ?? undefined, keys, now());
  if (token !== 'ok') {
    refuse(
      403,
      token === 'expired'
        ? 'The page was open for more than an hour: reload the console and press the button again.'
        : `The form carries ${token === 'missing' ? 'no' : 'a forged'} token: only a form the console rendered is taken.`,
    );
    return;
  }
  const account = form.get('account') ?? '';
  let made: MadeLink;
  try {
    made = await options.links.create(account);
  } catch (error) {
    const message = redactSecrets(coerceError(error).message);
    options.logger.warn({ account, err: error }, 'no connect link made');
    await render(409, { refusal: `No connect link was made for ${account}: ${message}` });
    return;
  }
  // The link itself is a credential: its URL is never logged.
  options.logger.info({ account, expiresAt: made.expiresAt }, 'connect link made');
  await render(200, { made });
}
