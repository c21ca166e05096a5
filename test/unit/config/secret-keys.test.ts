import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadStatusConfig } from '../../../src/config/load-config.js';
import { parseSecretKeys, SecretKeys } from '../../../src/config/secret-keys.js';
import { RESOURCE_NAMES } from '../../../src/resources/index.js';

const OLD = randomBytes(32);
const NEW = randomBytes(32);

describe('parseSecretKeys', () => {
  it('reads 32-byte keys in hex, base64 and base64url, comma-separated, in order', () => {
    const url = randomBytes(32);
    const parsed = parseSecretKeys(
      ` ${NEW.toString('hex')}, ${OLD.toString('base64')} ,${url.toString('base64url')}`,
    );
    expect(parsed).toEqual({ keys: [NEW, OLD, url] });
  });

  it('answers a key of the wrong length with a problem naming its position, never its value', () => {
    const short = randomBytes(16).toString('base64');
    const parsed = parseSecretKeys(`${NEW.toString('hex')},${short}`);
    expect(parsed).toEqual({
      problem:
        'key 2 of 2 is not 32 bytes in base64 or hex (make one with: openssl rand -base64 32)',
    });
    expect(JSON.stringify(parsed)).not.toContain(short);
  });

  it('answers text that is neither hex nor base64, or no key at all, with a problem', () => {
    const bad = 'not a key!';
    const parsed = parseSecretKeys(bad);
    expect('problem' in parsed && parsed.problem).toContain('key 1 of 1 is not 32 bytes');
    expect(JSON.stringify(parsed)).not.toContain(bad);
    expect(parseSecretKeys(' , ')).toEqual({ problem: 'holds no key' });
  });
});

describe('SecretKeys', () => {
  it('keeps the keys of HIRESYNC_SECRET_KEY in order, the sealing one first', () => {
    const config = loadStatusConfig(
      {
        DATABASE_URL: 'postgres://127.0.0.1/db',
        REDIS_URL: 'redis://127.0.0.1',
        HIRESYNC_SECRET_KEY: `${NEW.toString('base64')},${OLD.toString('hex')}`,
      },
      RESOURCE_NAMES,
    );
    expect(config.secretKeys?.reveal()).toEqual([NEW, OLD]);
  });

  it('never prints its keys: not in JSON, not in inspect, not in a string', () => {
    const config = loadStatusConfig(
      {
        DATABASE_URL: 'postgres://127.0.0.1/db',
        REDIS_URL: 'redis://127.0.0.1',
        HIRESYNC_SECRET_KEY: NEW.toString('base64'),
      },
      RESOURCE_NAMES,
    );
    const shown = [
      JSON.stringify(config),
      inspect(config, { depth: 5 }),
      String(config.secretKeys),
    ];
    for (const text of shown) {
      expect(text).not.toContain(NEW.toString('base64'));
      expect(text).not.toContain(NEW.toString('hex'));
      expect(text).not.toMatch(/"data":\[/);
    }
  });

  it('leaves the variable unset as no keys', () => {
    const config = loadStatusConfig(
      {
        DATABASE_URL: 'postgres://127.0.0.1/db',
        REDIS_URL: 'redis://127.0.0.1',
      },
      RESOURCE_NAMES,
    );
    expect(config.secretKeys).toBeUndefined();
    expect(() => new SecretKeys([])).toThrow();
  });
});
