import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loopbackRedirectUri, readCallback } from '../api/authorization-request.js';
import { coerceError, HiresyncError } from '../errors.js';
import { excerpt, redactSecrets } from '../secret.js';

/** Options of {@link listenForCallback}. */
export interface CallbackServerOptions {
  /** Port on 127.0.0.1; 0 picks a free one. */
  port: number;
  /** The `state` of the authorization request: a callback without it is ignored. */
  state: string;
  /** Exchanges the code and stores what it yields; what it throws is shown and ends the wait. */
  redeem: (code: string) => Promise<void>;
  /** Told (for the terminal) of each request ignored because its state did not match. */
  onIgnored?: () => void;
}

/** How the wait for the callback ended. */
export type CallbackOutcome =
  /** The code was redeemed and its token stored. */
  | { kind: 'authorized' }
  /** The authorization server sent an error (the user denied, or the request was refused). */
  | { kind: 'refused'; message: string }
  /** The callback was this command's, but the code could not be redeemed or stored. */
  | { kind: 'failed'; error: Error };

/** The loopback server waiting for the browser to come back. */
export interface CallbackServer {
  /** `http://127.0.0.1:PORT/callback`, with the port listened on. */
  readonly redirectUri: string;
  /** Settles once a callback carrying the right state has been answered. */
  readonly outcome: Promise<CallbackOutcome>;
  /** Whether a callback carrying the right state arrived (its outcome may still be pending). */
  readonly answered: boolean;
  /** Stops listening and drops every connection. */
  close(): Promise<void>;
}

/**
 * A short plain-text page: nothing in it is ever interpreted by the browser.
 * `done` is called once the page is delivered, or once the browser has gone
 * (the tab closed while the code was being redeemed): the outcome never
 * waits on a browser.
 */
function page(res: ServerResponse, status: number, text: string, done?: () => void): void {
  if (done) {
    if (res.destroyed) done();
    else res.once('close', done);
  }
  if (res.destroyed) return;
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  });
  res.end(`${text}\n`);
}

/**
 * Serves `GET /callback` on 127.0.0.1 only (RFC 8252 7.3), until a request
 * carrying the authorization request's `state` arrives:
 * - a missing or different state answers 400 "state mismatch" and the wait
 *   goes on (a forged or stale answer changes nothing);
 * - `error=…` answers 400 and ends the wait as refused;
 * - a `code` is redeemed (`redeem`): the browser is answered "authorized; you
 *   can close this page" once the token is stored, or with the failure; the
 *   wait ends when that page is delivered, or at once if the browser left.
 * Any other path is 404; a second answer once one is handled is 409. Throws
 * when the port cannot be listened on.
 */
export async function listenForCallback(options: CallbackServerOptions): Promise<CallbackServer> {
  let settle!: (outcome: CallbackOutcome) => void;
  const outcome = new Promise<CallbackOutcome>((resolve) => {
    settle = resolve;
  });
  let answered = false;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') return page(res, 404, 'not found');
    if (req.method !== 'GET') return page(res, 405, 'method not allowed');
    const answer = readCallback(url.searchParams, options.state);
    if (answer.kind === 'state mismatch') {
      options.onIgnored?.();
      return page(
        res,
        400,
        'state mismatch: this answer does not belong to the authorization that hiresync started, and was ignored',
      );
    }
    if (answered)
      return page(res, 409, 'this authorization was answered already; you can close this page');
    answered = true;
    if (answer.kind === 'malformed') {
      const message = `the authorization server's answer is malformed: ${answer.problem}`;
      return page(res, 400, `authorization failed: ${message}`, () =>
        settle({ kind: 'refused', message }),
      );
    }
    if (answer.kind === 'error') {
      const message = excerpt(
        answer.description === undefined ? answer.error : `${answer.error}: ${answer.description}`,
        300,
      );
      return page(res, 400, `authorization failed: ${message}`, () =>
        settle({ kind: 'refused', message }),
      );
    }
    options.redeem(answer.code).then(
      () =>
        page(res, 200, 'authorized; you can close this page', () => settle({ kind: 'authorized' })),
      (error: unknown) => {
        const failure = coerceError(error);
        page(res, 502, `authorization failed: ${redactSecrets(failure.message)}`, () =>
          settle({ kind: 'failed', error: failure }),
        );
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new HiresyncError(
              `port ${options.port} on 127.0.0.1 is in use: pass another --port (the redirect URI is http://127.0.0.1:PORT/callback)`,
              { cause: error },
            )
          : error,
      );
    });
    server.listen({ port: options.port, host: '127.0.0.1', exclusive: true }, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    redirectUri: loopbackRedirectUri(port),
    outcome,
    get answered() {
      return answered;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
