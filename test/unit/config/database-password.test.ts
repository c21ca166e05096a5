import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadDatabaseConfig } from '../../../src/config/load-config.js';
import { REDACTED, redactError, redactSecrets } from '../../../src/secret.js';

describe("DATABASE_URL's password", () => {
  it('is redacted from logs and errors once DATABASE_URL is read, as written and decoded', () => {
    const decoded = `pg-pw/${randomBytes(8).toString('hex')}@x`;
    const written = encodeURIComponent(decoded);
    loadDatabaseConfig({ DATABASE_URL: `postgres://hiresync:${written}@db.example:5432/hiresync` });
    expect(redactSecrets(`password authentication failed: ${decoded}`)).toBe(
      `password authentication failed: ${REDACTED}`,
    );
    expect(redactSecrets(`connecting to postgres://hiresync:${written}@db.example`)).not.toContain(
      written,
    );
    const error = redactError(new Error(`echo ${decoded}`));
    expect(String((error as Error).message)).not.toContain(decoded);
  });
});
