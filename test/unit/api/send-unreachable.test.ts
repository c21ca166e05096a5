import { createServer } from 'node:net';
import got from 'got';
import { describe, expect, it } from 'vitest';
import { sendWithRetries } from '../../../src/api/send.js';
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

describe('sendWithRetries against an endpoint that cannot be reached', () => {
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
