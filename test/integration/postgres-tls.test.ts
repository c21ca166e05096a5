import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PrivatePostgres } from '../../bench/private-servers.js';
import { POSTGRES_SERVER, presentUnlessCi } from '../../bench/required-binaries.js';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import { adminQuery, databaseUrl, TEST_DATABASE_PREFIX } from '../support/databases.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';
import { runCli } from '../support/run-cli.js';
import { makeTestCa, type TestCa } from '../support/test-certificates.js';
import {
  clearRedisPrefix,
  DEFAULT_CLIENT_SECRET,
  newRedisPrefix,
  simulatorEnv,
} from '../support/test-env.js';
import { startTlsPostgres, type TlsPostgres } from '../support/tls-postgres.js';

const { defer, cli } = cleanupAfterEach();
const privatePostgres = presentUnlessCi(PrivatePostgres.available(), POSTGRES_SERVER);

let ca: TestCa;
let otherCa: TestCa;
/** Its certificate for 127.0.0.1 and localhost, by `ca`. */
let server: TlsPostgres;
/** Its certificate for db.other.example only, by `ca`. */
let elsewhere: TlsPostgres;
let sim: ApiSimulator;

const JOBS = 3;

/** The environment of a hiresync process on `url`, with a Redis prefix of its own (cleared after the test). */
function envOn(url: string): Record<string, string> {
  const env = {
    ...simulatorEnv(sim),
    DATABASE_URL: url,
    REDIS_URL: inject('redisUrl'),
    HIRESYNC_REDIS_PREFIX: newRedisPrefix(),
    HIRESYNC_RESOURCES: 'jobs',
    HIRESYNC_HTTP_PORT: '0',
  };
  defer(() => clearRedisPrefix(env));
  return env;
}

/** A new database on `on`. */
async function newDatabase(on: TlsPostgres): Promise<string> {
  const name = `tls_${randomBytes(4).toString('hex')}`;
  await on.query([`create database ${name}`]);
  return name;
}

async function hasHiresyncSchema(on: TlsPostgres, database: string): Promise<boolean> {
  const [result] = await on.query(
    ["select count(*)::int as n from pg_namespace where nspname = 'hiresync'"],
    database,
  );
  return result?.rows[0]?.n === 1;
}

/** The JSON log lines of a process's output. */
function logLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe.runIf(privatePostgres)('Postgres over TLS, as DATABASE_URL says', () => {
  beforeAll(async () => {
    ca = makeTestCa('hiresync-test-ca');
    otherCa = makeTestCa('another-ca');
    server = await startTlsPostgres(
      ca.issue('server', { commonName: 'localhost', subjectAltName: 'IP:127.0.0.1,DNS:localhost' }),
      ca,
    );
    elsewhere = await startTlsPostgres(
      ca.issue('elsewhere', {
        commonName: 'db.other.example',
        subjectAltName: 'DNS:db.other.example',
      }),
      ca,
    );
    sim = await ApiSimulator.start({
      clientSecrets: [DEFAULT_CLIENT_SECRET],
      dataset: { counts: { jobs: JOBS } },
    });
  });

  afterAll(async () => {
    await sim?.close();
    server?.close();
    elsewhere?.close();
  });

  it('verify-full with the right CA migrates, syncs and serves, every connection encrypted', async () => {
    const database = await newDatabase(server);
    const env = envOn(server.url(database, { sslmode: 'verify-full', sslrootcert: ca.cert }));
    const migrate = await runCli(['migrate'], env);
    expect(migrate.code, migrate.stderr).toBe(0);
    const sync = await runCli(['sync'], env);
    expect(sync.code, sync.stderr).toBe(0);
    const [jobs] = await server.query(['select count(*)::int as n from public.jobs'], database);
    expect(jobs?.rows[0]?.n).toBe(JOBS);
    const connections = server.connections(database);
    expect(connections.length).toBeGreaterThan(0);
    expect(connections.filter((line) => !line.includes('SSL enabled'))).toEqual([]);

    const worker = cli(['worker'], env);
    await waitFor(async () => worker.stdout().includes('"msg":"worker started"'));
    const [ssl] = await server.query(
      [
        `select s.ssl from pg_stat_ssl s join pg_stat_activity a using (pid)
          where a.datname = '${database}' and a.application_name = 'hiresync'`,
      ],
      database,
    );
    expect(ssl?.rows.length).toBeGreaterThan(0);
    expect(ssl?.rows.every((row) => row.ssl === true)).toBe(true);
    worker.child.kill('SIGTERM');
    expect(await worker.exit, worker.stdout()).toBe(0);
  });

  it('a CA that did not sign the server certificate: migrate, sync and worker exit 2 naming sslrootcert, nothing written', async () => {
    const database = await newDatabase(server);
    const env = envOn(server.url(database, { sslmode: 'verify-full', sslrootcert: otherCa.cert }));
    for (const command of ['migrate', 'sync', 'worker']) {
      const result = await runCli([command], env);
      expect(result.code, `${command}: ${result.stderr}`).toBe(2);
      expect(result.stderr, command).toContain(
        `hiresync: invalid configuration: DATABASE_URL: the Postgres server's certificate did not verify against sslrootcert ${otherCa.cert}`,
      );
      expect(result.stderr, command).toContain(
        "set DATABASE_URL's sslrootcert to the CA certificate",
      );
      expect(result.stderr, command).not.toContain('migration of schema');
    }
    expect(await hasHiresyncSchema(server, database)).toBe(false);
  });

  it('require without a CA connects encrypted, unverified, and warns how to verify', async () => {
    const database = await newDatabase(server);
    const env = envOn(server.url(database, { sslmode: 'require' }));
    const migrate = await runCli(['migrate'], env);
    expect(migrate.code, migrate.stderr).toBe(0);
    expect(migrate.stderr).toMatch(
      /^hiresync migrate: warning: DATABASE_URL's sslmode=require: .*not verified.*set sslmode=verify-full and sslrootcert/m,
    );
    const sync = await runCli(['sync'], env);
    expect(sync.code, sync.stderr).toBe(0);
    const warnings = logLines(sync.stderr).filter((line) =>
      String(line.msg).startsWith("DATABASE_URL's sslmode=require"),
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.level).toBe(40);
    const connections = server.connections(database);
    expect(connections.length).toBeGreaterThan(0);
    expect(connections.filter((line) => !line.includes('SSL enabled'))).toEqual([]);
  });

  it('verify-full to a server whose certificate is for another name exits 2 naming sslmode; verify-ca connects', async () => {
    const database = await newDatabase(elsewhere);
    const full = await runCli(
      ['migrate'],
      envOn(elsewhere.url(database, { sslmode: 'verify-full', sslrootcert: ca.cert })),
    );
    expect(full.code, full.stderr).toBe(2);
    expect(full.stderr).toContain('is not issued for the host of DATABASE_URL');
    expect(full.stderr).toContain('sslmode=verify-full checks the host name');
    expect(await hasHiresyncSchema(elsewhere, database)).toBe(false);
    const caOnly = await runCli(
      ['migrate'],
      envOn(elsewhere.url(database, { sslmode: 'verify-ca', sslrootcert: ca.cert })),
    );
    expect(caOnly.code, caOnly.stderr).toBe(0);
  });

  it('sslmode=require to a server without TLS exits 2 and never connects in plain text', async () => {
    const admin = inject('databaseUrl');
    const name = `${TEST_DATABASE_PREFIX}plain${randomBytes(4).toString('hex')}`;
    await adminQuery(admin, [`create database ${name}`]);
    defer(() => adminQuery(admin, [`drop database if exists ${name} with (force)`]));
    const result = await runCli(['migrate'], envOn(`${databaseUrl(admin, name)}?sslmode=require`));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(
      "the Postgres server does not accept TLS, and DATABASE_URL's sslmode=require never falls back to plain text",
    );
    const client = new pg.Client({ connectionString: databaseUrl(admin, name) });
    await client.connect();
    const schemas = await client
      .query("select 1 from pg_namespace where nspname = 'hiresync'")
      .finally(() => client.end());
    expect(schemas.rowCount).toBe(0);
  });

  it('a client certificate is accepted by a cert line of pg_hba.conf; without one, exit 2 naming sslcert and sslkey', async () => {
    await server.query(['drop database if exists certdb', 'create database certdb']);
    const client = ca.issue('client', { commonName: 'postgres' });
    const verified = { sslmode: 'verify-full', sslrootcert: ca.cert };
    const without = await runCli(['migrate'], envOn(server.url('certdb', verified)));
    expect(without.code, without.stderr).toBe(2);
    expect(without.stderr).toContain(
      "the Postgres server requires a client certificate (connection requires a valid client certificate): set DATABASE_URL's sslcert and sslkey",
    );
    const withCertificate = await runCli(
      ['migrate'],
      envOn(server.url('certdb', { ...verified, sslcert: client.cert, sslkey: client.key })),
    );
    expect(withCertificate.code, withCertificate.stderr).toBe(0);
    expect(withCertificate.stdout).toContain('schema hiresync: applied');
    const connections = server.connections('certdb');
    expect(connections.length).toBeGreaterThan(0);
    expect(connections.filter((line) => !line.includes('SSL enabled'))).toEqual([]);
  });

  it("a running worker whose server's certificate stops verifying answers /healthz 503 naming sslrootcert", async () => {
    const database = await newDatabase(elsewhere);
    const env = envOn(elsewhere.url(database, { sslmode: 'verify-ca', sslrootcert: ca.cert }));
    expect((await runCli(['migrate'], env)).code).toBe(0);
    const worker = cli(['worker'], env);
    await waitFor(async () => worker.stdout().includes('"msg":"worker started"'));
    const started = logLines(worker.stdout()).find((line) => line.msg === 'worker started');
    const healthz = `http://127.0.0.1:${String(started?.port)}/healthz`;
    expect((await fetch(healthz)).status).toBe(200);

    elsewhere.serve(otherCa.issue('impostor', { commonName: 'db.other.example' }));
    await elsewhere.query([
      `select pg_terminate_backend(pid) from pg_stat_activity where datname = '${database}'`,
    ]);
    // The sessions' end may be the first reason /healthz gives; the next
    // connection's, its certificate refused, follows.
    const answer = await waitFor(async () => {
      const response = await fetch(healthz);
      const body =
        response.status === 503 ? ((await response.json()) as { postgres: string }) : undefined;
      return body?.postgres.includes('sslrootcert') ? body : undefined;
    });
    expect(answer.postgres).toContain(
      `the Postgres server's certificate did not verify against sslrootcert ${ca.cert}`,
    );
  });
});
