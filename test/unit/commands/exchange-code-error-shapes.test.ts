// A refused authorization code is reported with what the token endpoint
// said, in either shape it may say it: RFC 6749 5.2's `error` /
// `error_description` (the live service) or `{"message": …}`.
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

/** The message of exchanging a code at an endpoint that answers `status` `body`. */
async function refusal(status: number, body: unknown): Promise<string> {
  const endpoint = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  servers.push(endpoint);
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', () => resolve()));
  const { port } = endpoint.address() as AddressInfo;
  const error = await exchangeCode({
    http: createHttp({ timeoutMs: 5000 }),
    tokenUrl: `http://127.0.0.1:${port}/token`,
    partner: {
      clientId: 'partner-client',
      clientSecret: new Secret('partner-secret'),
      authorizeUrl: undefined,
      scope: undefined,
    },
    code: 'a-code',
    redirectUri: 'http://127.0.0.1:8976/callback',
    codeVerifier: 'a-verifier',
    logger: captureLogger('silent').logger,
    timeoutMs: 5000,
  }).catch((e: unknown) => e as Error);
  return (error as Error).message;
}

describe('a refused authorization code', () => {
  it('names the RFC 6749 error and its description', async () => {
    expect(
      await refusal(400, {
        error: 'invalid_grant',
        error_description: 'authorization code expired',
      }),
    ).toBe(
      'the token endpoint /token refused the authorization code (400: invalid_grant: authorization code expired); authorize again',
    );
  });

  it('names the message of a {"message": …} answer', async () => {
    expect(await refusal(400, { message: 'authorization code expired' })).toBe(
      'the token endpoint /token refused the authorization code (400: authorization code expired); authorize again',
    );
  });
});
