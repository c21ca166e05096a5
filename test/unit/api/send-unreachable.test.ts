import { createServer, type Socket } from 'node:net';
import got from 'got';
import { describe, expect, it } from 'vitest';
import { type SendOptions, sendWithRetries } from '../../../src/api/send.js';
import { TransientApiError, UnreachableError } from '../../../src/errors.js';
import { captureLogger } from '../../support/capture-logger.js';

/** A loopback port nothing listens on: one a server held a moment ago. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** A loopback server that accepts connections and never answers; closed by the returned function. */
async function silentServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}/token`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A POST to `url` with `maxRetries` retries, logging nothing. */
function post(url: string, maxRetries: number, http = got.extend({ retry: { limit: 0 } })) {
  const options: SendOptions = {
    http,
    method: 'POST',
    url,
    headers: {},
    maxRetries,
    defaultRetryAfterMs: 1000,
    maxRetryAfterMs: 60_000,
    maxResponseBytes: 1024,
    endpointVariable: 'HIRESYNC_AUTH_URL',
    logger: captureLogger('silent').logger,
  };
  return sendWithRetries(options).then(
    () => {
      throw new Error('the request succeeded');
    },
    (error: unknown) => error,
  );
}

describe('sendWithRetries against an endpoint that cannot be reached', () => {
  it('throws an UnreachableError, still a TransientApiError, when every try failed at the network level', async () => {
    const port = await closedPort();
    const error = await post(`http://127.0.0.1:${port}/token`, 1);
    expect(error).toBeInstanceOf(UnreachableError);
    expect(error).toBeInstanceOf(TransientApiError);
    expect((error as Error).name).toBe('UnreachableError');
    expect((error as Error).message).toContain(`http://127.0.0.1:${port} is unreachable`);
  });

  it('throws a TransientApiError that is not an UnreachableError when the requests timed out', async () => {
    const server = await silentServer();
    try {
      const error = await post(
        server.url,
        0,
        got.extend({ retry: { limit: 0 }, timeout: { request: 100 } }),
      );
      expect(error).toBeInstanceOf(TransientApiError);
      expect(error).not.toBeInstanceOf(UnreachableError);
      expect((error as Error).message).toContain('timed out');
    } finally {
      await server.close();
    }
  });

  it('names the server it could not reach and the variable that sets it', async () => {
    const port = await closedPort();
    const sent = sendWithRetries({
      http: got.extend({ retry: { limit: 0 } }),
      method: 'POST',
      url: `http://127.0.0.1:${port}/token?cursor=abc`,
      headers: {},
      maxRetries: 0,
      defaultRetryAfterMs: 1000,
      maxRetryAfterMs: 60_000,
      maxResponseBytes: 1024,
      endpointVariable: 'HIRESYNC_AUTH_URL',
      logger: captureLogger('silent').logger,
    });
    await expect(sent).rejects.toThrow(
      `POST /token failed 1 times (ECONNREFUSED); http://127.0.0.1:${port} is unreachable: check HIRESYNC_AUTH_URL and the network`,
    );
  });
});
