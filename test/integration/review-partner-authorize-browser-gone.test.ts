// Found by review (accounts authorize): when the browser went away while the
// code was being exchanged, the command never exited (its outcome waited for
// the answer page to finish). It now exits once the code is redeemed.
// Runs the built CLI (npm run build first).
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import { createTestDatabase } from '../support/databases.js';
import { CLI } from '../support/run-cli.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A browser that sends the callback request and goes away as soon as
 * `gone()` holds (checked every millisecond), without waiting for the page.
 * Leaving on a condition, not after a fixed few milliseconds: on a loaded
 * machine a tab closed after 5 ms could close before the server read the
 * request at all, and then no code exchange ever started.
 */
function browserThatLeaves(url: string, gone: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => {
      res.resume();
      res.on('end', () => finish());
    });
    req.on('error', () => finish());
    const poll = setInterval(() => {
      if (!gone()) return;
      req.destroy();
      finish();
    }, 1);
    function finish() {
      clearInterval(poll);
      resolve();
    }
  });
}

describe('review: accounts authorize when the browser leaves during the code exchange', () => {
  it('exits (at the latest after --timeout) instead of hanging', async () => {
    const sim = await ApiSimulator.start({
      clientSecrets: ['sync-secret'],
      accounts: [{ name: 'acme', dataset: { seed: 5, idOffset: 1_000_000 } }],
    });
    cleanups.push(() => sim.close());
    const database = await createTestDatabase(inject('databaseUrl'));
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: database.url,
      HIRESYNC_REDIS_PREFIX: `test-${randomUUID()}`,
      HIRESYNC_SECRET_KEY: randomBytes(32).toString('base64'),
      HIRESYNC_BASE_URL: sim.url,
      HIRESYNC_AUTH_URL: sim.authUrl,
      HIRESYNC_PARTNER_CLIENT_ID: 'partner-client',
      HIRESYNC_PARTNER_CLIENT_SECRET: 'partner-secret',
    };
    const child = spawn(
      process.execPath,
      [CLI, 'accounts', 'authorize', 'acme', '--port', '0', '--timeout', '3s'],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => resolve(code)),
    );
    // The hanging child holds connections to the test database: kill it first.
    cleanups.push(async () => {
      await database.drop();
    });
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    });

    let url: URL | undefined;
    for (let i = 0; i < 200 && !url; i += 1) {
      const match = /^(https?:\/\/\S+)$/m.exec(stdout);
      if (match?.[1]) url = new URL(match[1]);
      else await sleep(50);
    }
    if (!url) throw new Error(`no authorize URL printed: ${stdout} ${stderr}`);
    url.searchParams.set('sim_account', 'acme');
    const approved = await fetch(url, { redirect: 'manual' });
    const location = approved.headers.get('location') as string;
    // The browser reaches the callback, and the tab is closed the moment the
    // code is redeemed: while hiresync is still storing the token and writing the page.
    await browserThatLeaves(location, () => sim.partnerStats('acme').codesRedeemed > 0);

    // No deadline here: a command that never exits fails the test by its timeout.
    const code = await exited;
    expect(sim.partnerStats('acme').codesRedeemed).toBe(1);
    expect(code, `stdout: ${stdout}\nstderr: ${stderr}`).not.toBeNull();
  });
});
