import { describe, expect, it } from 'vitest';
import {
  REDACTED,
  redactSecrets,
  registerSecret,
  Secret,
  secretRegistryStats,
} from '../../src/secret.js';

/** A seeded generator, so that every run registers the same values. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const next = random(23);
const pick = (alphabet: string, length: number) =>
  Array.from({ length }, () => alphabet.charAt(Math.floor(next() * alphabet.length))).join('');
const WIDE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~+/=&%" é';

/** A JWT-shaped access token: every one shares its first 36 characters, as real ones do. */
function jwtToken(account: number): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const claims = part({ sub: `client-${account}`, jti: pick('0123456789abcdef', 24) });
  return `${part({ alg: 'RS256', typ: 'JWT' })}.${claims}.${pick(WIDE.slice(0, 64), 43)}`;
}

interface Account {
  secret: string;
  basic: string;
  token: string;
}

/** Registers accounts as a worker does: the secret, its Basic credential (pinned), the token in force. */
function registerAccounts(label: string, from: number, to: number): Account[] {
  const accounts: Account[] = [];
  for (let i = from; i < to; i += 1) {
    const secret = new Secret(pick(WIDE, 24));
    const basic = Buffer.from(`${label}-client-${i}:${secret.reveal()}`).toString('base64');
    registerSecret(basic, { pinned: true });
    const token = jwtToken(i);
    registerSecret(token, { slot: `${label}:${i}` });
    accounts.push({ secret: secret.reveal(), basic, token });
  }
  return accounts;
}

/** Every form redaction knows a value in (each is how some channel carries it). */
function formsOf(value: string): Record<string, string> {
  return {
    raw: value,
    base64: Buffer.from(value).toString('base64'),
    base64url: Buffer.from(value).toString('base64url'),
    percent: encodeURIComponent(value),
    form: new URLSearchParams({ v: value }).toString().slice(2),
    json: JSON.stringify(value).slice(1, -1),
  };
}

const LINE =
  '{"level":30,"time":"2026-11-24T19:50:14.182Z","service":"hiresync","pid":41233,"account":"c00042","resource":"tracking_links","page":12,"records":500,"msg":"page written"}';

describe('redaction with thousands of accounts registered', () => {
  it('blanks out every encoding of the first, a middle and the last account’s secret, Basic credential and token, wherever the line holds it', () => {
    const accounts = registerAccounts('enc', 0, 3000);
    for (const index of [0, 1499, 2999]) {
      const account = accounts[index] as Account;
      for (const [what, value] of Object.entries(account)) {
        for (const [encoding, form] of Object.entries(formsOf(value))) {
          const where = `account ${index}'s ${what}, ${encoding}`;
          expect(redactSecrets(`sent ${form} back`), where).toBe(`sent ${REDACTED} back`);
          // Inside a longer run of the same alphabet, as in a URL or a Basic credential.
          expect(redactSecrets(`zz${form}zz`), where).not.toContain(form);
          expect(redactSecrets(`zz${form}zz`), where).toBe(`zz${REDACTED}zz`);
          expect(redactSecrets(`https://api.test/v3/jobs?x=${form}&page=2`), where).toBe(
            `https://api.test/v3/jobs?x=${REDACTED}&page=2`,
          );
        }
        // In a log line, pino writes the value JSON-escaped.
        expect(redactSecrets(JSON.stringify({ body: `403: ${value}!` })), what).toBe(
          JSON.stringify({ body: `403: ${REDACTED}!` }),
        );
      }
      expect(redactSecrets(`Authorization: Basic ${account.basic}`)).toBe(
        `Authorization: Basic ${REDACTED}`,
      );
    }
    expect(redactSecrets(LINE)).toBe(LINE);
  });

  it('registers a new token with the same bounded work among 3,000 accounts as among 100: its forms are added, nothing is rebuilt', () => {
    const steps = (fn: () => void) => {
      const before = secretRegistryStats();
      fn();
      const after = secretRegistryStats();
      return { steps: after.steps - before.steps, nodes: after.nodes - before.nodes };
    };
    const measure = () => {
      const token = jwtToken(99_999);
      const forms = [...new Set(Object.values(formsOf(token)))];
      // One node per character of each form at the very most, and two new nodes per form.
      const bound = forms.reduce((sum, form) => sum + form.length + 1, 0);
      const registering = steps(() => registerSecret(token, { slot: 'work:0' }));
      const line = steps(() => redactSecrets(LINE));
      return { bound, forms: forms.length, registering, line };
    };
    registerAccounts('work', 1, 100);
    const few = measure();
    registerAccounts('work', 100, 3000);
    const many = measure();
    for (const { bound, forms, registering } of [few, many]) {
      expect(registering.steps).toBeLessThanOrEqual(bound);
      expect(registering.nodes).toBeLessThanOrEqual(2 * forms);
    }
    // A line is scanned once: a lookup per character, and a few more where
    // its text agrees with the start of some form, whatever their number.
    expect(few.line.steps).toBeLessThanOrEqual(3 * LINE.length);
    expect(many.line.steps).toBeLessThanOrEqual(3 * LINE.length);
  });
});
