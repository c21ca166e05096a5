import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Kysely } from 'kysely';
import type { ListenAddress } from '../config/types.js';
import { type ConsoleOptions, isConsolePath, serveConsole } from '../console/serve-console.js';
import { HiresyncError } from '../errors.js';
import type { RedisConnection } from '../redis/connect.js';
import { tlsFailureOf } from '../redis/tls-failure.js';
import type { Metrics } from '../status/metrics.js';
import { pingDatabase } from '../warehouse/reports/status-reads.js';
import type { Database } from '../warehouse/tables.js';

/** Options of {@link startHttpServer}. */
export interface HttpServerOptions {
  port: number;
  db: Kysely<Database>;
  redis: RedisConnection;
  metrics: Metrics;
  /**
   * The state of the job schedulers (the worker's ScheduleKeeper): /healthz
   * answers 503 when they are missing from Redis.
   */
  schedules?: () => Promise<{ schedules: string; missing: string[] }>;
  /**
   * The public routes (webhooks, connect links), tried in order before the
   * 404: each answers the request and resolves true, or resolves false to
   * pass it on. Served on the public listener only when there is one.
   */
  routes?: readonly ((req: IncomingMessage, res: ServerResponse) => Promise<boolean>)[];
  /** Default 0.0.0.0 (the container's probe and Prometheus reach it from outside). */
  host?: string;
  /** The console at `/` (HIRESYNC_CONSOLE_PASSWORD); undefined: `/` answers 404 saying how to turn it on. */
  console?: ConsoleOptions | undefined;
  /**
   * A listener of the public routes' own (HIRESYNC_PUBLIC_PORT and
   * HIRESYNC_PUBLIC_HOST): `routes` are served there and nowhere else, and
   * every other path there is a bare 404. Undefined: one listener serves all.
   */
  publicListener?: ListenAddress | undefined;
}

/** What {@link startHttpServer} started. */
export interface HttpServers {
  /** The listener of /healthz, /metrics and the console (and of `routes` when there is no public one). */
  server: Server;
  port: number;
  /** The public listener, when `publicListener` was given. */
  publicServer: Server | undefined;
  publicPort: number | undefined;
  /** Stops both listeners once their requests under way are answered. */
  close: () => Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

async function probe(check: () => Promise<unknown>, timeoutMs = 2000): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return 'ok';
  } catch (error) {
    return (error as Error).message || 'unreachable';
  } finally {
    clearTimeout(timer);
  }
}

/** Tries `routes` in order; none answered: a 404 saying `hint`. */
async function routeOrNotFound(
  routes: HttpServerOptions['routes'],
  req: IncomingMessage,
  res: ServerResponse,
  hint: string,
): Promise<void> {
  for (const route of routes ?? []) if (await route(req, res)) return;
  res.writeHead(404, { 'content-type': 'text/plain' });
  res.end(`not found${hint}\n`);
}

/** The settings of a listener's port and address, named in the error when it cannot listen. */
interface ListenerSettings {
  port: string;
  host: string;
}

const HTTP_LISTENER: ListenerSettings = { port: 'HIRESYNC_HTTP_PORT', host: 'HIRESYNC_HTTP_HOST' };
const PUBLIC_LISTENER: ListenerSettings = {
  port: 'HIRESYNC_PUBLIC_PORT',
  host: 'HIRESYNC_PUBLIC_HOST',
};

/**
 * The error of a listener that could not listen, saying which setting to
 * change: a port in use, one the user may not bind (below 1024 without the
 * privilege), an address that is not this machine's. Anything else as it came.
 */
export function listenError(
  error: unknown,
  address: ListenAddress,
  names: ListenerSettings,
): Error {
  const code = (error as { code?: unknown }).code;
  const where = `${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`;
  const cannot = `cannot listen on ${where} (${names.port}=${address.port}, ${names.host}=${address.host})`;
  const problem =
    code === 'EADDRINUSE'
      ? `${cannot}: the port is in use by another process (another hiresync worker?); set ${names.port} to a free port, or stop what holds it ('lsof -i :${address.port}' names it)`
      : code === 'EACCES'
        ? `${cannot}: this user may not bind port ${address.port} (ports below 1024 need privileges); set ${names.port} to a port of 1024 or above, or grant the process the right to bind it (CAP_NET_BIND_SERVICE)`
        : code === 'EADDRNOTAVAIL'
          ? `${cannot}: ${address.host} is not an address of this machine; set ${names.host} to one of its addresses, or to 0.0.0.0 for all of them`
          : undefined;
  if (problem === undefined) return error instanceof Error ? error : new Error(String(error));
  return new HiresyncError(problem, { cause: error });
}

/** A server answering with `handle`; a handler that throws answers a bare 500. */
async function listen(
  handle: Handler,
  address: ListenAddress,
  names: ListenerSettings,
): Promise<Server> {
  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    const failed = (error: unknown) => reject(listenError(error, address, names));
    server.once('error', failed);
    server.listen(address.port, address.host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  return server;
}

function close(server: Server | undefined): Promise<void> {
  if (!server?.listening) return Promise.resolve();
  return new Promise((resolve) => {
    server.close(() => resolve());
  });
}

/**
 * Serves GET /healthz (200 when Postgres and Redis answer and, given
 * `schedules`, the job schedulers are in Redis; else 503, naming what
 * failed), GET /metrics (Prometheus) and the console at `/` (given
 * `console`), then `routes`; any other path 404. Given `publicListener`,
 * `routes` are served on that listener instead, where nothing else is: not
 * the health details, the metrics (which name every account) nor the console.
 */
export async function startHttpServer(options: HttpServerOptions): Promise<HttpServers> {
  const split = options.publicListener !== undefined;
  const healthz = async (res: ServerResponse) => {
    const [postgres, pinged] = await Promise.all([
      probe(() => pingDatabase(options.db)),
      probe(() => options.redis.ping()),
    ]);
    // A certificate that stopped verifying: the setting to fix, not "Connection is closed".
    const redis = pinged === 'ok' ? pinged : (tlsFailureOf(options.redis) ?? pinged);
    const schedules = redis === 'ok' && options.schedules ? await options.schedules() : undefined;
    const ok =
      postgres === 'ok' &&
      redis === 'ok' &&
      (schedules === undefined || schedules.schedules === 'ok');
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        status: ok ? 'ok' : 'unhealthy',
        postgres,
        redis,
        ...(schedules === undefined
          ? {}
          : {
              schedules: schedules.schedules,
              ...(schedules.missing.length > 0 ? { missingSchedules: schedules.missing } : {}),
            }),
      }),
    );
  };
  const own: Handler = async (req, res) => {
    if (req.method === 'GET' && req.url === '/healthz') {
      await healthz(res);
    } else if (req.method === 'GET' && req.url === '/metrics') {
      const scrape = await options.metrics.scrape(req.headers['accept-encoding']);
      res.writeHead(200, scrape.headers);
      res.end(scrape.body);
    } else if (isConsolePath((req.url ?? '').split('?')[0] ?? '', options.console?.publicUrl)) {
      await serveConsole(req, res, options.console);
    } else if (split) {
      await routeOrNotFound(
        [],
        req,
        res,
        ': try /healthz or /metrics (webhooks and connect links are served on HIRESYNC_PUBLIC_PORT)',
      );
    } else {
      await routeOrNotFound(options.routes, req, res, ': try /healthz or /metrics');
    }
  };
  // Says nothing of what else the worker serves, nor of its health.
  const publicOnly: Handler = (req, res) => routeOrNotFound(options.routes, req, res, '');
  const server = await listen(
    own,
    { port: options.port, host: options.host ?? '0.0.0.0' },
    HTTP_LISTENER,
  );
  let publicServer: Server | undefined;
  try {
    publicServer =
      options.publicListener && (await listen(publicOnly, options.publicListener, PUBLIC_LISTENER));
  } catch (error) {
    await close(server);
    throw error;
  }
  return {
    server,
    port: (server.address() as AddressInfo).port,
    publicServer,
    publicPort: publicServer && (publicServer.address() as AddressInfo).port,
    close: async () => {
      await Promise.all([close(server), close(publicServer)]);
    },
  };
}

/**
 * The listener of HIRESYNC_HTTP_PORT while the worker cannot start (its Redis
 * TLS does not verify): every path, /healthz first, answers 503 with
 * `{status: 'unhealthy', redis: <why>}`, so a readiness probe fails saying
 * why. Closed before the worker's own listeners start.
 */
export async function startNotReadyServer(
  address: ListenAddress,
  redis: () => string,
): Promise<{ port: number; close: () => Promise<void> }> {
  const server = await listen(
    async (_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'unhealthy', redis: redis() }));
    },
    address,
    HTTP_LISTENER,
  );
  return { port: (server.address() as AddressInfo).port, close: () => close(server) };
}
