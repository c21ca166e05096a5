import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { listenError, startHttpServer } from '../../../src/http/server.js';
import { freePort } from '../../support/free-port.js';

const held: Server[] = [];
afterEach(async () => {
  await Promise.all(held.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A port something else listens on, on 127.0.0.1. */
async function occupiedPort(): Promise<number> {
  const server = createServer();
  held.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

/** startHttpServer's options that play no part in listening. */
const parts = { db: {}, redis: {}, metrics: {} } as unknown as Pick<
  Parameters<typeof startHttpServer>[0],
  'db' | 'redis' | 'metrics'
>;

describe('a listener that cannot listen', () => {
  it('names HIRESYNC_HTTP_PORT, the address, and what to do when the port is in use', async () => {
    const port = await occupiedPort();
    const start = startHttpServer({ ...parts, port, host: '127.0.0.1' });
    await expect(start).rejects.toThrow(
      `cannot listen on 127.0.0.1:${port} (HIRESYNC_HTTP_PORT=${port}, HIRESYNC_HTTP_HOST=127.0.0.1): the port is in use by another process`,
    );
    await expect(start).rejects.toThrow(
      /set HIRESYNC_HTTP_PORT to a free port, or stop what holds it/,
    );
  });

  it('names HIRESYNC_PUBLIC_PORT when the public port is in use, and frees the port the other listener took', async () => {
    const publicPort = await occupiedPort();
    const port = await freePort();
    const start = startHttpServer({
      ...parts,
      port,
      host: '127.0.0.1',
      publicListener: { port: publicPort, host: '127.0.0.1' },
    });
    await expect(start).rejects.toThrow(
      `cannot listen on 127.0.0.1:${publicPort} (HIRESYNC_PUBLIC_PORT=${publicPort}, HIRESYNC_PUBLIC_HOST=127.0.0.1)`,
    );
    await expect(start).rejects.toThrow(/set HIRESYNC_PUBLIC_PORT to a free port/);
    // The private listener, opened first, was closed again: its port can be taken.
    const again = createServer();
    held.push(again);
    await new Promise<void>((resolve, reject) => {
      again.once('error', reject);
      again.listen(port, '127.0.0.1', resolve);
    });
  });

  it('names the host setting when the address is not one of this machine', async () => {
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): never an address of this machine.
    const start = startHttpServer({ ...parts, port: 0, host: '192.0.2.1' });
    await expect(start).rejects.toThrow(
      /192\.0\.2\.1 is not an address of this machine; set HIRESYNC_HTTP_HOST to one of its addresses/,
    );
  });

  it('says a privileged port needs privileges, naming the setting to change', () => {
    const denied = Object.assign(new Error('listen EACCES: permission denied 0.0.0.0:80'), {
      code: 'EACCES',
    });
    const error = listenError(
      denied,
      { port: 80, host: '0.0.0.0' },
      {
        port: 'HIRESYNC_PUBLIC_PORT',
        host: 'HIRESYNC_PUBLIC_HOST',
      },
    );
    expect(error.message).toBe(
      'cannot listen on 0.0.0.0:80 (HIRESYNC_PUBLIC_PORT=80, HIRESYNC_PUBLIC_HOST=0.0.0.0): this user may not bind port 80 (ports below 1024 need privileges); set HIRESYNC_PUBLIC_PORT to a port of 1024 or above, or grant the process the right to bind it (CAP_NET_BIND_SERVICE)',
    );
    expect(error.cause).toBe(denied);
  });

  it('writes an IPv6 address in brackets', () => {
    const busy = Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE' });
    const error = listenError(
      busy,
      { port: 9464, host: '::1' },
      {
        port: 'HIRESYNC_HTTP_PORT',
        host: 'HIRESYNC_HTTP_HOST',
      },
    );
    expect(error.message).toMatch(/^cannot listen on \[::1\]:9464 /);
  });
});
