// The loopback callback of `accounts authorize` settles its outcome once the
// page is delivered or the browser has gone: a browser gone during the code
// exchange must not leave it pending forever.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { listenForCallback } from '../../../src/accounts/loopback-callback.js';
import { browserThatLeaves } from '../../support/browser.js';

// The browser leaves once the redeem has begun, so the request has surely
// arrived: a browser leaving after a fixed time could, on a loaded machine,
// leave before its request reached the server, and nothing would settle.

describe('the loopback callback when the browser leaves before the answer', () => {
  it('still settles the outcome once the code is redeemed', async () => {
    let redeemed = false;
    let redeeming = false;
    const server = await listenForCallback({
      port: 0,
      state: 'the-state',
      redeem: async () => {
        redeeming = true;
        // The code exchange, storing the token and migrating the schema take a moment.
        await sleep(300);
        redeemed = true;
      },
    });
    try {
      await browserThatLeaves(`${server.redirectUri}?code=abc&state=the-state`, () => redeeming);
      // No deadline here: an outcome that never settles fails the test by its timeout.
      const outcome = await server.outcome;
      expect(redeemed).toBe(true);
      expect(server.answered).toBe(true);
      expect(outcome).toEqual({ kind: 'authorized' });
    } finally {
      await server.close();
    }
  });

  it('still settles the outcome when the redeem fails', async () => {
    let redeeming = false;
    const server = await listenForCallback({
      port: 0,
      state: 'the-state',
      redeem: async () => {
        redeeming = true;
        await sleep(300);
        throw new Error('the token endpoint refused the authorization code');
      },
    });
    try {
      await browserThatLeaves(`${server.redirectUri}?code=abc&state=the-state`, () => redeeming);
      const outcome = await server.outcome;
      expect(outcome).toMatchObject({ kind: 'failed' });
    } finally {
      await server.close();
    }
  });
});
