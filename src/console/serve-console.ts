import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { coerceError } from '../errors.js';
import { redactSecrets, type Secret } from '../secret.js';
import type { StatusReport } from '../status/report-types.js';
import { actionResultPage } from './action-pages.js';
import type { ConsoleActions, ConsoleLinks, MadeLink, PendingLink } from './action-ports.js';
import { CONSOLE_CHALLENGE, isConsoleLogin } from './basic-auth.js';
import { runConsoleAction } from './console-actions.js';
import { checkFormToken, createFormToken, formTokenKeys } from './form-token.js';
import { parseConsoleQuery } from './overview-query.js';
import { messagePage, sendConsolePage } from './page-shell.js';
import { renderConsole } from './render-console.js';
import { crossOriginRefusal } from './same-origin.js';

/** Largest form body the console reads: it has a few short fields. */
const MAX_FORM_BYTES = 4096;

export type { ConsoleLinks, MadeLink } from './action-ports.js';

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
  /** What the other actions do (the worker's operations). */
  actions: ConsoleActions;
  /**
   * Spends a form's token, for every worker of the deployment: true the
   * first time, false when it was spent already (a form is taken once).
   */
  spendFormToken: (token: string) => Promise<boolean>;
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
 * Serves the console at `/`: GET renders it (behind HTTP Basic), POST carries
 * out the action its form names (see console-actions.ts), but only when
 * {@link guardPost} takes it: the request comes from the console itself (same
 * origin, and the unspent token of a form the console rendered within the
 * hour); anything else changes nothing.
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
    let pendingLinks: PendingLink[];
    try {
      [report, pendingLinks] = await Promise.all([
        options.readReport(),
        options.actions.pendingLinks(),
      ]);
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
        actions: { pendingLinks, inviteUnavailable: options.actions.inviteUnavailable },
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
  const form = await guardPost(req, res, options, keys, now());
  if (!form) return;
  const answer = await runConsoleAction(form, options);
  const { level, msg, fields } = answer.log;
  options.logger[level](fields, msg);
  if (answer.result) {
    sendConsolePage(res, answer.status, actionResultPage(answer.result));
    return;
  }
  await render(answer.status, {
    ...(answer.made ? { made: answer.made } : {}),
    ...(answer.refusal ? { refusal: answer.refusal } : {}),
  });
}

/**
 * The one guard of every POST, whatever its action: the request must come
 * from the console itself (same origin), be its form (urlencoded, at most
 * {@link MAX_FORM_BYTES}), carry the token of a page the console rendered
 * within the hour, and that token must not have been spent (a reload of an
 * action's answer sends it again). Returns the form, its token spent; or
 * answers the refusal (403, 415, 413, 409; 503 when the token cannot be
 * spent), logs it, and returns undefined: nothing was done.
 */
async function guardPost(
  req: IncomingMessage,
  res: ServerResponse,
  options: ConsoleOptions,
  keys: readonly Buffer[],
  nowMs: number,
): Promise<URLSearchParams | undefined> {
  const refuse = (status: number, why: string, form?: URLSearchParams) => {
    const action = form?.get('action') ?? (form ? 'reauthorize' : undefined);
    options.logger.warn(
      {
        status,
        reason: why,
        ...(action ? { action: action.slice(0, 40) } : {}),
        outcome: 'refused',
      },
      'console action refused',
    );
    sendConsolePage(
      res,
      status,
      messagePage('Refused: nothing was done', [
        why,
        'Open the console and press the button there.',
      ]),
    );
    return undefined;
  };
  const crossOrigin = crossOriginRefusal(req.headers, options.publicUrl);
  if (crossOrigin) {
    req.resume();
    return refuse(403, `This request was refused because ${crossOrigin}.`);
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    req.resume();
    return refuse(415, 'The console takes only its own form (application/x-www-form-urlencoded).');
  }
  const form = await readForm(req);
  if (!form) return refuse(413, 'The form is larger than the console’s own.');
  const field = form.get('token') ?? undefined;
  const token = checkFormToken(field, keys, nowMs);
  if (token !== 'ok' || field === undefined) {
    return refuse(
      403,
      token === 'expired'
        ? 'The page was open for more than an hour: reload the console and press the button again.'
        : `The form carries ${token === 'missing' ? 'no' : 'a forged'} token: only a form the console rendered is taken.`,
      form,
    );
  }
  let fresh: boolean;
  try {
    fresh = await options.spendFormToken(field);
  } catch (error) {
    options.logger.error({ err: error }, 'cannot spend a form token');
    return refuse(
      503,
      'The console cannot tell whether this form was sent already (Redis does not answer): reload the console and try again.',
      form,
    );
  }
  if (!fresh) {
    return refuse(
      409,
      'This form was sent already (a reload, or a second press): each page of the console does one action. Go back to the console, which shows what was done, and press the button again if you still mean it.',
      form,
    );
  }
  return form;
}
