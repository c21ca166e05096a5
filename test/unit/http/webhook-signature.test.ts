import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signatureDigest, verifySignature } from '../../../src/http/webhook-signature.js';
import { encodeWebhookBody, webhookSignature } from '../../../src/simulator/webhook-sender.js';

const SECRET = 'a webhook secret of the vendor';
const BODY = Buffer.from('{"action":"job_deleted","payload":{"job":{"id":209256}}}');
const hex = (body: Buffer | string, secret = SECRET) =>
  createHmac('sha256', secret).update(body).digest('hex');

describe('webhook signature', () => {
  it('accepts sha256 and the hex HMAC-SHA256 of the raw body with the secret, in either case', () => {
    expect(verifySignature(BODY, `sha256 ${hex(BODY)}`, SECRET)).toBe(true);
    expect(verifySignature(BODY, `sha256 ${hex(BODY).toUpperCase()}`, SECRET)).toBe(true);
    expect(verifySignature(BODY, `  sha256   ${hex(BODY)}  `, SECRET)).toBe(true);
  });

  it('refuses a signature made with another secret, or of a body one byte different', () => {
    expect(verifySignature(BODY, `sha256 ${hex(BODY, 'another secret')}`, SECRET)).toBe(false);
    const changed = Buffer.from(BODY);
    changed[changed.length - 3] = 0x37;
    expect(verifySignature(changed, `sha256 ${hex(BODY)}`, SECRET)).toBe(false);
  });

  it('refuses a missing, repeated or malformed header, and another algorithm', () => {
    const digest = hex(BODY);
    for (const header of [
      undefined,
      '',
      digest,
      `sha1 ${digest}`,
      `sha256 ${digest.slice(2)}`,
      `sha256 ${digest}00`,
      `sha256=${digest}`,
      `sha256 ${digest.replace(/^./, 'g')}`,
      [`sha256 ${digest}`, `sha256 ${digest}`],
    ]) {
      expect(verifySignature(BODY, header, SECRET), String(header)).toBe(false);
    }
    expect(signatureDigest(`sha256 ${digest}`)).toHaveLength(32);
    expect(signatureDigest('sha256 xyz')).toBeUndefined();
  });

  it("checks the body as sent: the vendor's escaped JSON, not the same event encoded otherwise", () => {
    const event = {
      action: 'job_post_deleted',
      payload: { job_post: { id: 258341, title: 'Développeuse <b>senior</b> & co ✓ 🚀' } },
    };
    const sent = encodeWebhookBody(event);
    expect(sent).toContain('D\\u00e9veloppeuse \\u003cb\\u003esenior\\u003c/b\\u003e \\u0026 co');
    expect(sent).toContain('\\u2713 \\ud83d\\ude80');
    expect(/^[\x20-\x7e]*$/.test(sent)).toBe(true);
    expect(JSON.parse(sent)).toEqual(event);
    const signature = webhookSignature(sent, SECRET);
    expect(verifySignature(Buffer.from(sent), signature, SECRET)).toBe(true);
    expect(verifySignature(Buffer.from(JSON.stringify(event)), signature, SECRET)).toBe(false);
  });
});
