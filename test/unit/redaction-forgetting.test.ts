import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  MAX_RECENT,
  RECENT_MS,
  REDACTED,
  redactSecrets,
  registeredSecretCount,
  registerSecret,
  Secret,
  secretRegistryStats,
} from '../../src/secret.js';

const fresh = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;
const MINUTE = 60_000;

/** Moves the clock on by `ms`. */
function wait(ms: number): void {
  vi.advanceTimersByTime(ms);
}

describe('what the redaction forgets, and when', () => {
  // One fake clock for the whole file: it only ever moves on, as the real one does.
  beforeAll(() => {
    vi.useFakeTimers({ toFake: ['performance'] });
  });
  afterAll(() => {
    vi.useRealTimers();
  });
  beforeEach(() => {
    // Whatever an earlier test left among the recent values is forgotten first.
    wait(2 * RECENT_MS);
    registeredSecretCount();
  });

  it('keeps a token in force however long, and the one it replaced for an hour after', () => {
    const first = fresh('first');
    const second = fresh('second');
    registerSecret(first, { slot: 'provider:1' });
    wait(3 * RECENT_MS);
    expect(redactSecrets(`echo ${first}`)).toBe(`echo ${REDACTED}`);
    registerSecret(second, { slot: 'provider:1' });
    wait(RECENT_MS - MINUTE);
    expect(redactSecrets(`echo ${first}`)).toBe(`echo ${REDACTED}`);
    wait(2 * MINUTE);
    expect(redactSecrets(`echo ${first}`)).toBe(`echo ${first}`);
    expect(redactSecrets(`echo ${second}`)).toBe(`echo ${REDACTED}`);
  });

  it('keeps the configured credentials for the life of the process', () => {
    const secret = fresh('client-secret');
    new Secret(secret);
    const basic = Buffer.from(`client:${secret}`).toString('base64');
    registerSecret(basic, { pinned: true });
    wait(100 * RECENT_MS);
    registerSecret(fresh('token'));
    expect(redactSecrets(`${secret} ${basic}`)).toBe(`${REDACTED} ${REDACTED}`);
  });

  it('holds nothing more of a month of hourly tokens than of the last hour: every form of the older ones is given back', () => {
    const before = secretRegistryStats();
    const tokens: string[] = [];
    // 30 days, a token an hour for each of 20 accounts.
    for (let hour = 0; hour < 30 * 24; hour += 1) {
      if (hour > 0) wait(RECENT_MS);
      for (let account = 0; account < 20; account += 1) {
        const token = fresh(`tok${account}`);
        registerSecret(token, { slot: `month:${account}` });
        tokens.push(token);
      }
    }
    // In force: the last 20; recent: the 20 they have just replaced.
    expect(registeredSecretCount() - before.values).toBe(40);
    expect(redactSecrets(tokens[0] as string)).toBe(tokens[0]);
    expect(redactSecrets(tokens.at(-21) as string)).toBe(REDACTED);
    expect(redactSecrets(tokens.at(-1) as string)).toBe(REDACTED);
    wait(RECENT_MS);
    registerSecret(fresh('code'));
    // What 20 tokens in force and one code take, however many came before.
    const after = secretRegistryStats();
    expect(after.values - before.values).toBe(21);
    const perToken = (after.forms - before.forms) / 21;
    expect(perToken).toBeLessThanOrEqual(6);
    expect(after.nodes - before.nodes).toBeLessThanOrEqual(2 * (after.forms - before.forms));
  });

  it('gives back the tree of forms exactly when every recent value is forgotten', () => {
    const before = secretRegistryStats();
    for (let i = 0; i < 1000; i += 1) registerSecret(fresh('code'));
    expect(secretRegistryStats().forms).toBeGreaterThan(before.forms);
    wait(RECENT_MS);
    registeredSecretCount();
    const after = secretRegistryStats();
    expect({ values: after.values, forms: after.forms, nodes: after.nodes }).toEqual({
      values: before.values,
      forms: before.forms,
      nodes: before.nodes,
    });
  });

  it(`keeps at most ${MAX_RECENT} recent values, forgetting the oldest first`, () => {
    const before = registeredSecretCount();
    const values = Array.from({ length: MAX_RECENT + 10 }, (_, i) => `recent-${i}-value`);
    for (const value of values) registerSecret(value);
    expect(registeredSecretCount() - before).toBe(MAX_RECENT);
    expect(redactSecrets(values[9] as string)).toBe(values[9]);
    expect(redactSecrets(values[10] as string)).toBe(REDACTED);
    expect(redactSecrets(values.at(-1) as string)).toBe(REDACTED);
  });
});
