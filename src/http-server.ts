import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import { type Kysely, sql } from 'kysely';
import { type ConsoleOptions, isConsolePath, serveConsole } from './console/serve-console.js';
import type { Metrics } from './metrics.js';
import type { Database } from './warehouse/schema.js';

/** Options of {@link startHttpServer}. */
export interface HttpServerOptions {
  port: number;
  db: Kysely<Database>;
  redis: Redis;
  metrics: Metrics;
  /**
   * The state of the job schedulers (the worker's ScheduleKeeper): /healthz
   * answers 503 when they are missing from Redis.
   */
  schedules?: () => Promise<{ schedules: string; missing: string[] }>;
  /**
   * More routes, tried in order before the 404 (the connect links'): each
   * answers the request and resolves true, or resolves false to pass it on.
   */
  routes?: readonly ((req: IncomingMessage, res: ServerResponse) => Promise<boolean>)[];
  /** Default 0.0.0.0 (the container's probe and Prometheus reach it from outside). */
  host?: string;
  /** The console at `/` (HIRESYNC_CONSOLE_PASSWORD); undefined: `/` answers 404 saying how to turn it on. */
  console?: ConsoleOptions | undefined;
}

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

/**
 * Serves GET /healthz (200 when Postgres and Redis answer and, given
 * `schedules`, the job schedulers are in Redis; else 503), GET /metrics
 * (Prometheus) and the console at `/` (given `console`); any other path 404.
 */
export async function startHttpServer(
  options: HttpServerOptions,
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    void (async () => {
      if (req.method === 'GET' && req.url === '/healthz') {
        const [postgres, redis] = await Promise.all([
          probe(() => sql`select 1`.execute(options.db)),
          probe(() => options.redis.ping()),
        ]);
        const schedules =
          redis === 'ok' && options.schedules ? await options.schedules() : undefined;
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
      } else if (req.method === 'GET' && req.url === '/metrics') {
        const scrape = await options.metrics.scrape(req.headers['accept-encoding']);
        res.writeHead(200, scrape.headers);
        res.end(scrape.body);
      } else if (isConsolePath((req.url ?? '').split('?')[0] ?? '', options.console?.publicUrl)) {
        await serveConsole(req, res, options.console);
      } else {
        for (const route of options.routes ?? []) if (await route(req, res)) return;
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not found: try /healthz or /metrics\n');
      }
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}
