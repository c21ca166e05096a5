import { spawn } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import { describe, expect, inject, it } from 'vitest';
import { cleanupAfterEach } from '../support/lifecycle.js';
import { CLI, CLI_CWD } from '../support/run-cli.js';

const { harness, defer } = cleanupAfterEach();

/** A TCP proxy to Redis that can be cut (sockets destroyed, listener closed) or frozen (bytes dropped). */
async function redisProxy(target: URL) {
  const sockets: Socket[] = [];
  let mode: 'pass' | 'frozen' = 'pass';
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    sockets.push(client, upstream);
    client.on('error', () => {});
    upstream.on('error', () => {});
    client.on('data', (d) => {
      if (mode === 'pass') upstream.write(d);
    });
    upstream.on('data', (d) => {
      if (mode === 'pass') client.write(d);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `redis://127.0.0.1:${port}`,
    cut: () => {
      server.close();
      for (const s of sockets) s.destroy();
    },
    freeze: () => {
      mode = 'frozen';
    },
    close: () => {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}

async function waitFor<T>(f: () => T | undefined, ms = 20_000): Promise<T> {
  for (let i = 0; i < ms / 50; i++) {
    const v = f();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('timed out');
}

describe('hiresync worker on SIGTERM', () => {
  // Each case ends with exit 0 within HIRESYNC_HTTP_TIMEOUT (2s here) and the CLI's exit; 30 s means it hangs.
  for (const how of ['cut', 'freeze'] as const) {
    it(`exits 0 when Redis is gone (${how}), saying the runs in hand resume from their checkpoints`, async () => {
      // The time limit of a shutdown whose Redis does not answer.
      const h = await harness({ env: { HIRESYNC_RESOURCES: 'jobs', HIRESYNC_HTTP_TIMEOUT: '2s' } });
      const proxy = await redisProxy(new URL(inject('redisUrl')));
      defer(() => proxy.close());
      const child = spawn(process.execPath, [CLI, 'worker'], {
        cwd: CLI_CWD,
        env: { PATH: process.env.PATH, ...h.env, REDIS_URL: proxy.url },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
      });
      child.stderr.on('data', (d: Buffer) => {
        out += d.toString();
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
      defer(async () => {
        if (child.exitCode === null) child.kill('SIGKILL');
      });
      await waitFor(() => /"port":(\d+)/.exec(out)?.[1]);
      await new Promise((r) => setTimeout(r, 500));
      proxy[how]();
      await new Promise((r) => setTimeout(r, 500));
      child.kill('SIGTERM');
      const code = await Promise.race([
        exited,
        new Promise<'still running'>((r) => setTimeout(() => r('still running'), 30_000)),
      ]);
      expect(code).toBe(0);
      expect(out).toContain('"msg":"worker stopped"');
      if (how === 'cut') {
        expect(out).toContain('the runs in hand resume from their checkpoints');
      }
    }, 60_000);
  }
});
