import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { REDACTED, redactError, redactSecrets, registerSecret, Secret } from '../../src/secret.js';
import { captureLogger } from '../support/capture-logger.js';

const fresh = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;

describe('redactSecrets', () => {
  it('blanks out a Secret from the moment it is constructed, in every encoding it is sent in', () => {
    const value = `${fresh('secret')} /+&"`;
    new Secret(value);
    for (const form of [
      value,
      Buffer.from(value).toString('base64'),
      Buffer.from(value).toString('base64url'),
      encodeURIComponent(value),
      new URLSearchParams({ s: value }).toString().slice(2),
      JSON.stringify(value).slice(1, -1),
    ]) {
      expect(redactSecrets(`before ${form} after`)).toBe(`before ${REDACTED} after`);
    }
  });

  it('blanks out registered tokens and the Basic credential built from a client secret', () => {
    const token = fresh('tok');
    const basic = Buffer.from(`client:${fresh('s')}`).toString('base64');
    registerSecret(token);
    registerSecret(basic, { pinned: true });
    expect(redactSecrets(`{"echo":"Authorization: Bearer ${token}"}`)).not.toContain(token);
    // What is not secret is kept: the text around it, and the marker in its place.
    expect(redactSecrets(`{"echo":"Authorization: Bearer ${token}"}`)).toBe(
      `{"echo":"Authorization: Bearer ${REDACTED}"}`,
    );
    expect(redactSecrets(`{"echo":"${token}"}`)).toBe(`{"echo":"${REDACTED}"}`);
    expect(redactSecrets(`Authorization: Basic ${basic}`)).toBe(`Authorization: Basic ${REDACTED}`);
  });

  it('blanks out Bearer and Basic credentials it does not know, and leaves ordinary text alone', () => {
    expect(redactSecrets('sent Bearer abc.def-123_unknown')).toBe(`sent Bearer ${REDACTED}`);
    expect(redactSecrets('client_secret=hunter2hunter2&x=1')).toBe(`client_secret=${REDACTED}&x=1`);
    const plain = '403 from /v3/jobs: forbidden; check HIRESYNC_API_KEY and Basic authentication';
    expect(redactSecrets(plain)).toBe(plain);
  });

  it('ignores values too short to be secrets', () => {
    registerSecret('ab');
    expect(redactSecrets('a tab and a cab')).toBe('a tab and a cab');
  });

  it('redactError keeps the name and blanks the message and stack', () => {
    const token = fresh('tok');
    registerSecret(token);
    const error = new TypeError(`echo ${token}`);
    const clean = redactError(error);
    expect(clean.name).toBe('TypeError');
    expect(clean.message).toBe(`echo ${REDACTED}`);
    expect(clean.stack).not.toContain(token);
    // The stack keeps its first line, redacted, and its frames.
    expect(clean.stack?.split('\n')[0]).toBe(`TypeError: echo ${REDACTED}`);
    expect(clean.stack).toContain('redaction.test.ts');
    const plain = new Error('nothing secret');
    expect(redactError(plain)).toBe(plain);
  });
});

describe('logger', () => {
  it('redacts a registered token from error messages, stacks, the message and any string field', () => {
    const token = fresh('tok');
    registerSecret(token);
    const log = captureLogger();
    const error = new Error(`403: you sent ${token}`);
    log.logger.error(
      { err: error, echoed: `x-${token}-y`, nested: { body: token } },
      `msg ${token}`,
    );
    expect(log.text()).not.toContain(token);
    const line = JSON.parse(log.lines()[0] as string) as {
      err: { message: string; stack: string };
      echoed: string;
      nested: { body: string };
      msg: string;
    };
    expect(line.echoed).toBe(`x-${REDACTED}-y`);
    expect(line.err.stack).toMatch(/^Error: 403: you sent \[redacted\]\n\s+at /);
    expect(line.err.message).toBe(`403: you sent ${REDACTED}`);
    expect(line.nested.body).toBe(REDACTED);
    expect(line.msg).toBe(`msg ${REDACTED}`);
  });
});
