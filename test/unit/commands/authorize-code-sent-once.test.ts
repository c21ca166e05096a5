// The authorization code is single-use (RFC 6749 4.1.2: a server must deny
// it a second time and should revoke what it issued for it): like the refresh
// grant, the code exchange is never sent twice, even when its answer is lost.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { exchangeCode } from '../../../src/api/exchange-code.js';
import { createHttp } from '../../../src/api/http.js';
import { Secret } from '../../../src/secret.js';
import { captureLogger } from '../../support/capture-logger.js';

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe('the authorization code exchange', () => {
  it('never presents the same code twice, even when the first answer is lost', async () => {
    const presented: string[] = [];
    const endpoint = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on('end', () => {
        const code = new URLSearchParams(body).get('code') ?? '';
        presented.push(code);
        if (presented.length === 1) {
          // Redeemed server-side; the answer is lost on the way back.
          req.socket.destroy();
          return;
        }
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: 'invalid_grant',
            error_description: 'authorization code already used',
          }),
        );
      });
    });
    servers.push(endpoint);
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', () => resolve()));
    const { port } = endpoint.address() as AddressInfo;

    await exchangeCode({
      http: createHttp({ timeoutMs: 5000 }),
      tokenUrl: `http://127.0.0.1:${port}/token`,
      partner: {
        clientId: 'partner-client',
        clientSecret: new Secret('partner-secret'),
        authorizeUrl: undefined,
        scope: undefined,
      },
      code: 'the-single-use-code',
      redirectUri: 'http://127.0.0.1:8976/callback',
      codeVerifier: 'a-verifier',
      logger: captureLogger('silent').logger,
      timeoutMs: 5000,
    }).catch(() => undefined);

    expect(presented).toEqual(['the-single-use-code']);
  });
});
