// Redis over TLS (rediss:// and REDIS_CA_FILE): a redis-server of the test's
// own listening in TLS only (no plain port), its certificate issued by a CA
// made in the test. A certificate that does not verify, or TLS spoken to a
// server without it (and the reverse), is an error naming the setting, never
// a fallback to plain text: `sync` and `accounts test` exit 2 at their
// preflight, the worker answers /healthz 503 with the reason and logs it once.
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrivateRedis } from '../../bench/private-servers.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';
import { runCli } from '../support/run-cli.js';
import { issueCert, makeCa, type TestCa } from '../support/test-ca.js';

const { harness, cli } = cleanupAfterEach();

let dir: string;
let ca: TestCa;
/** Another CA of the same name: it signed nothing the server holds. */
let otherCa: TestCa;
let tlsRedis: PrivateRedis;
let plainRedis: PrivateRedis;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'hiresync-redis-tls-'));
  ca = makeCa(mkdtempSync(path.join(dir, 'ca-')));
  otherCa = makeCa(mkdtempSync(path.join(dir, 'other-')));
  const cert = issueCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'] });
  tlsRedis = await PrivateRedis.start({ tls: { ...cert, caFile: ca.certFile } });
  plainRedis = await PrivateRedis.start();
});

afterAll(async () => {
  await tlsRedis?.close();
  await plainRedis?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Keys under `prefix` on the TLS server, read trusting the test's CA. */
async function keysOf(prefix: string | undefined): Promise<string[]> {
  const redis = new Redis(tlsRedis.url, { tls: { ca: readFileSync(ca.certFile, 'utf8') } });
  try {
    return await redis.keys(`${prefix}:*`);
  } finally {
    redis.disconnect();
  }
}

/**
 * Whether a client spoke plain text to the TLS port (the server logs each)
 * since the log was `mark` long.
 */
function plainTextSince(mark: number): boolean {
  return /wrong version number|packet length too long|http request|unknown protocol/i.test(
    tlsRedis.log().slice(mark),
  );
}

describe('Redis over TLS (rediss:// and REDIS_CA_FILE)', () => {
  it('syncs several pages through a TLS-only Redis verified against REDIS_CA_FILE, with no plain-text connection', async () => {
    const h = await harness({ simulator: { dataset: { counts: { jobs: 450 } } } });
    const mark = tlsRedis.log().length;
    const env = { ...h.env, REDIS_URL: tlsRedis.url, REDIS_CA_FILE: ca.certFile };
    const result = await runCli(['sync', '--resource', 'jobs'], env);
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    expect((await h.liveIds('jobs')).sort()).toEqual(h.expectedIds('jobs').sort());
    expect(h.expectedIds('jobs').length).toBeGreaterThan(300);
    // Its checkpoints and locks went to the TLS server.
    expect(await keysOf(h.env.HIRESYNC_REDIS_PREFIX)).not.toEqual([]);
    expect(plainTextSince(mark)).toBe(false);
  });

  it('exits 2 naming REDIS_CA_FILE when it names a CA that did not sign the certificate (sync, accounts test, status), storing nothing', async () => {
    const h = await harness({ simulator: { dataset: { counts: { jobs: 50 } } } });
    const mark = tlsRedis.log().length;
    const env = { ...h.env, REDIS_URL: tlsRedis.url, REDIS_CA_FILE: otherCa.certFile };
    const result = await runCli(['sync', '--resource', 'jobs'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('REDIS_CA_FILE: names a CA that did not sign the certificate');
    expect(result.stderr).toContain('give the PEM file of the CA that signed it');
    expect(await h.liveIds('jobs')).toEqual([]);
    expect(await keysOf(h.env.HIRESYNC_REDIS_PREFIX)).toEqual([]);
    expect(plainTextSince(mark)).toBe(false);

    const test = await runCli(['accounts', 'test', 'default'], env);
    expect(test.code).toBe(2);
    expect(test.stderr).toContain('REDIS_CA_FILE: names a CA that did not sign');

    const status = await runCli(['status'], env);
    expect(status.code).toBe(2);
    expect(status.stderr).toContain('REDIS_CA_FILE: names a CA that did not sign');
  });

  it("exits 2 asking for REDIS_CA_FILE when the server's private CA is not among the system's", async () => {
    const h = await harness();
    const result = await runCli(['sync', '--resource', 'jobs'], {
      ...h.env,
      REDIS_URL: tlsRedis.url,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'REDIS_CA_FILE: is not set, and the certificate of the Redis server at rediss://127.0.0.1',
    );
    expect(result.stderr).toContain("does not verify against the system's CAs");
    expect(await keysOf(h.env.HIRESYNC_REDIS_PREFIX)).toEqual([]);
  });

  it('says to use rediss:// when redis:// names a port that takes TLS only', async () => {
    const h = await harness();
    const mark = tlsRedis.log().length;
    const result = await runCli(['sync', '--resource', 'jobs'], {
      ...h.env,
      REDIS_URL: tlsRedis.url.replace('rediss:', 'redis:'),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('cannot reach Redis: REDIS_URL: is redis://');
    expect(result.stderr).toContain('use rediss://');
    // The server saw the plain text (what the other cases prove never happens).
    expect(plainTextSince(mark)).toBe(true);
    expect(await keysOf(h.env.HIRESYNC_REDIS_PREFIX)).toEqual([]);
  });

  it('says to use redis:// when rediss:// names a server without TLS', async () => {
    const h = await harness();
    const result = await runCli(['sync', '--resource', 'jobs'], {
      ...h.env,
      REDIS_URL: plainRedis.url.replace('redis:', 'rediss:'),
      REDIS_CA_FILE: ca.certFile,
    });
    // The plain server either answers the TLS hello with a plain-text error
    // (TLS refused: exit 2) or waits for the rest of a line that never comes
    // (the handshake times out: exit 1), as the hello's random bytes fall.
    expect([1, 2]).toContain(result.code);
    expect(result.stderr).toMatch(/REDIS_URL: is rediss:\/\/, but /);
    expect(result.stderr).toContain('use redis://');
  });

  it('keeps the worker up and not ready, /healthz 503 naming REDIS_CA_FILE, logged once, when the CA is wrong', async () => {
    const h = await harness();
    const mark = tlsRedis.log().length;
    const worker = cli(['worker'], {
      ...h.env,
      REDIS_URL: tlsRedis.url,
      REDIS_CA_FILE: otherCa.certFile,
      HIRESYNC_HTTP_PORT: '0',
      LOG_LEVEL: 'info',
    });
    const port = await waitFor(async () => /"port":(\d+)/.exec(worker.stdout())?.[1]);
    const response = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(response.status).toBe(503);
    const body = (await response.json()) as { status: string; redis: string };
    expect(body.status).toBe('unhealthy');
    expect(body.redis).toContain('REDIS_CA_FILE: names a CA that did not sign the certificate');
    const logged = worker
      .stdout()
      .split('\n')
      .filter((line) => line.includes('not ready'));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('REDIS_CA_FILE: names a CA that did not sign');
    expect(await keysOf(h.env.HIRESYNC_REDIS_PREFIX)).toEqual([]);
    worker.child.kill('SIGTERM');
    expect(await worker.exit).toBe(0);
    expect(plainTextSince(mark)).toBe(false);
  });

  it("says on /healthz and once in the log that REDIS_CA_FILE no longer verifies the server's certificate when it is replaced under a running worker", async () => {
    const h = await harness();
    // A server of its own: its certificate is replaced by one of another CA mid-test.
    const own = mkdtempSync(path.join(dir, 'replaced-'));
    const cert = issueCert(ca, { ips: ['127.0.0.1'] }, 'own');
    const served = {
      certFile: path.join(own, 'server.crt'),
      keyFile: path.join(own, 'server.key'),
      caFile: path.join(own, 'ca.crt'),
    };
    const serve = (from: TestCa, issued: { certFile: string; keyFile: string }) => {
      copyFileSync(issued.certFile, served.certFile);
      copyFileSync(issued.keyFile, served.keyFile);
      copyFileSync(from.certFile, served.caFile);
    };
    serve(ca, cert);
    const redis = await PrivateRedis.start({ tls: served });
    try {
      const worker = cli(['worker'], {
        ...h.env,
        REDIS_URL: redis.url,
        REDIS_CA_FILE: ca.certFile,
        HIRESYNC_HTTP_PORT: '0',
        LOG_LEVEL: 'info',
      });
      const port = await waitFor(
        async () =>
          /"msg":"worker started"/.test(worker.stdout()) &&
          /"port":(\d+)/.exec(worker.stdout())?.[1],
      );
      const healthz = async () => {
        const response = await fetch(`http://127.0.0.1:${port}/healthz`);
        return { status: response.status, body: (await response.json()) as { redis: string } };
      };
      expect((await healthz()).body.redis).toBe('ok');

      serve(otherCa, issueCert(otherCa, { ips: ['127.0.0.1'] }, 'own'));
      await redis.restart(0);
      const unhealthy = await waitFor(async () => {
        const now = await healthz();
        return now.body.redis.startsWith('REDIS_CA_FILE') && now;
      });
      expect(unhealthy.status).toBe(503);
      expect(unhealthy.body.redis).toContain(
        'REDIS_CA_FILE: names a CA that did not sign the certificate',
      );
      const logged = worker
        .stdout()
        .split('\n')
        .filter((line) => line.includes('redis connection error, reconnecting: REDIS_CA_FILE'));
      // Once per connection that lost Redis, not at each reconnection attempt.
      expect(logged.length).toBeGreaterThan(0);
      expect(new Set(logged.map((line) => /"connection":"([^"]+)"/.exec(line)?.[1])).size).toBe(
        logged.length,
      );
    } finally {
      await redis.close();
    }
  });
});
