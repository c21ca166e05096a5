import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { PrivatePostgres } from '../../bench/private-servers.js';
import type { IssuedCertificate, TestCa } from './test-certificates.js';

/**
 * pg_hba.conf of a {@link TlsPostgres}: TLS only over TCP (no `host` line, so
 * a plain-text connection is refused), the database `certdb` by client
 * certificate (its common name the user's), every other database trusted.
 */
const HBA = [
  'local all all trust',
  'hostssl certdb all 127.0.0.1/32 cert',
  'hostssl all all 127.0.0.1/32 trust',
  '',
].join('\n');

/** A private Postgres cluster with `ssl=on`, its certificate and the CA of client certificates given. */
export interface TlsPostgres {
  pg: PrivatePostgres;
  /** `postgres://postgres@127.0.0.1:PORT/NAME` with `params` (no TLS parameter unless given). */
  url(database: string, params?: Record<string, string>): string;
  /** Runs `statements` as postgres on `database` (default postgres), over TLS (the test's own, not verified). */
  query(statements: string[], database?: string): Promise<pg.QueryResult[]>;
  /** Serves `certificate` from now on (`pg_ctl reload`): new connections meet it. */
  serve(certificate: IssuedCertificate): void;
  /** The server log's `connection authorized` lines for `database` (log_connections is on). */
  connections(database: string): string[];
  close(): void;
}

function asPostgresOwned(file: string, mode: number): void {
  chmodSync(file, mode);
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres', file]);
}

/**
 * Starts a cluster serving `certificate` over TLS, whose `ssl_ca_file` is
 * `clientCa`'s certificate (the CA of the client certificates it accepts).
 */
export async function startTlsPostgres(
  certificate: IssuedCertificate,
  clientCa: TestCa,
): Promise<TlsPostgres> {
  const server = await PrivatePostgres.start();
  const data = server.dataDir;
  const serve = (issued: IssuedCertificate) => {
    copyFileSync(issued.cert, path.join(data, 'server.crt'));
    copyFileSync(issued.key, path.join(data, 'server.key'));
    asPostgresOwned(path.join(data, 'server.crt'), 0o644);
    asPostgresOwned(path.join(data, 'server.key'), 0o600);
  };
  serve(certificate);
  copyFileSync(clientCa.cert, path.join(data, 'root.crt'));
  asPostgresOwned(path.join(data, 'root.crt'), 0o644);
  appendFileSync(
    path.join(data, 'postgresql.conf'),
    "\nssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\nssl_ca_file = 'root.crt'\nlog_connections = on\n",
  );
  writeFileSync(path.join(data, 'pg_hba.conf'), HBA);
  server.restart();
  const base = `postgres://postgres@127.0.0.1:${server.port}`;
  const url = (database: string, params: Record<string, string> = {}) => {
    const query = new URLSearchParams(params).toString();
    return `${base}/${database}${query ? `?${query}` : ''}`;
  };
  return {
    pg: server,
    url,
    query: async (statements, database = 'postgres') => {
      const client = new pg.Client({
        connectionString: url(database),
        ssl: { rejectUnauthorized: false },
      });
      await client.connect();
      try {
        const results: pg.QueryResult[] = [];
        for (const statement of statements) results.push(await client.query(statement));
        return results;
      } finally {
        await client.end();
      }
    },
    serve: (issued) => {
      serve(issued);
      server.ctl('reload');
    },
    connections: (database) =>
      readFileSync(server.logFile, 'utf8')
        .split('\n')
        .filter(
          (line) =>
            line.includes('connection authorized') && line.includes(`database=${database} `),
        ),
    close: () => server.close(),
  };
}
