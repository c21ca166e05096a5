import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadDatabaseConfig } from '../../src/config/load-config.js';
import { ConfigError } from '../../src/errors.js';
import { describeTlsFailure, postgresTls } from '../../src/postgres-tls.js';
import { makeTestCa, type TestCa } from '../support/test-certificates.js';

const BASE = 'postgres://hiresync:s3cret-pw@db.example:5432/hiresync';

let ca: TestCa;
let client: { cert: string; key: string };
let other: { cert: string; key: string };

beforeAll(() => {
  ca = makeTestCa('unit-ca');
  client = ca.issue('client', { commonName: 'hiresync' });
  other = ca.issue('other', { commonName: 'other' });
});

/** The ConfigError `postgresTls(url)` throws, as text. */
function refusal(url: string): string {
  try {
    postgresTls(url);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`no ConfigError for ${url}`);
}

describe('postgresTls: what each sslmode checks', () => {
  it('leaves a URL that says nothing of TLS to pg as it is', () => {
    const tls = postgresTls(`${BASE}?application_name=x`);
    expect(tls).toMatchObject({ connectionString: `${BASE}?application_name=x`, ssl: undefined });
    expect(tls.check).toBeUndefined();
  });

  it('disable connects in plain text and takes the TLS parameters out of the URL, keeping the others', () => {
    const tls = postgresTls(`${BASE}?sslmode=disable&options=-c%20x%3D1&sslrootcert=/nowhere`);
    expect(tls.ssl).toBe(false);
    expect(tls.check).toBe('plain');
    expect(tls.connectionString).toBe(`${BASE}?options=-c+x%3D1`);
  });

  it('require without sslrootcert encrypts without verifying, and says how to verify', () => {
    const tls = postgresTls(`${BASE}?sslmode=require`);
    expect(tls.ssl).toEqual({ rejectUnauthorized: false });
    expect(tls.check).toBe('encrypted');
    expect(tls.unverified).toMatch(/not verified.*sslmode=verify-full and sslrootcert/);
    expect(tls.connectionString).toBe(BASE);
  });

  it('require with sslrootcert verifies the CA but not the host name, as libpq does', () => {
    const tls = postgresTls(`${BASE}?sslmode=require&sslrootcert=${ca.cert}`);
    expect(tls.check).toBe('verify-ca');
    expect(tls.ssl).toMatchObject({ ca: readFileSync(ca.cert, 'utf8') });
    expect((tls.ssl as { rejectUnauthorized?: boolean }).rejectUnauthorized).toBeUndefined();
    expect(
      (tls.ssl as { checkServerIdentity: () => unknown }).checkServerIdentity(),
    ).toBeUndefined();
    expect(tls.unverified).toBeUndefined();
  });

  it.each(['prefer', 'allow'])(
    '%s encrypts as require does and never falls back to plain text',
    (mode) => {
      const tls = postgresTls(`${BASE}?sslmode=${mode}`);
      expect(tls.ssl).toEqual({ rejectUnauthorized: false });
      expect(tls.check).toBe('encrypted');
    },
  );

  it('verify-ca verifies the chain against sslrootcert and not the host name', () => {
    const tls = postgresTls(`${BASE}?sslmode=verify-ca&sslrootcert=${ca.cert}`);
    expect(tls.check).toBe('verify-ca');
    expect(tls.ssl).toMatchObject({ ca: readFileSync(ca.cert, 'utf8') });
    expect(typeof (tls.ssl as { checkServerIdentity?: unknown }).checkServerIdentity).toBe(
      'function',
    );
  });

  it('verify-ca without sslrootcert is refused, naming sslrootcert', () => {
    expect(refusal(`${BASE}?sslmode=verify-ca`)).toMatch(
      /DATABASE_URL: sslmode=verify-ca needs sslrootcert/,
    );
  });

  it("verify-full checks the CA and the host name, against the system's CAs without sslrootcert", () => {
    const own = postgresTls(`${BASE}?sslmode=verify-full&sslrootcert=${ca.cert}`);
    expect(own.check).toBe('verify-full');
    expect(own.ssl).toEqual({ ca: readFileSync(ca.cert, 'utf8') });
    expect(postgresTls(`${BASE}?sslmode=verify-full`).ssl).toEqual({});
    expect(postgresTls(`${BASE}?sslmode=verify-full&sslrootcert=system`).ssl).toEqual({});
  });

  it('sslrootcert=system with a weaker mode than verify-full is refused', () => {
    expect(refusal(`${BASE}?sslmode=require&sslrootcert=system`)).toMatch(
      /needs sslmode=verify-full/,
    );
  });

  it('sslrootcert or ssl=true without sslmode verify fully, as node-postgres did', () => {
    expect(postgresTls(`${BASE}?sslrootcert=${ca.cert}`).check).toBe('verify-full');
    expect(postgresTls(`${BASE}?ssl=true`).check).toBe('verify-full');
  });

  it('an unknown sslmode is refused, naming the modes', () => {
    expect(refusal(`${BASE}?sslmode=verify_full`)).toMatch(
      /sslmode=verify_full is not a mode: use disable, require, verify-ca or verify-full/,
    );
  });

  it('connects to a Unix-domain socket in plain text whatever the mode, as libpq does', () => {
    for (const url of [
      'postgres://hiresync@%2Frun%2Fpostgresql/hiresync?sslmode=verify-full',
      `${BASE}?host=/run/postgresql&sslmode=require`,
    ]) {
      expect(postgresTls(url)).toMatchObject({ ssl: false, check: 'plain', unverified: undefined });
    }
  });

  it('a password with @ and %2F in it is no socket host: the host is the one pg parses', () => {
    const tls = postgresTls('postgres://u:x@%2Fy@db.example.com/db?sslmode=verify-full');
    expect(tls.check).toBe('verify-full');
    expect(tls.ssl).not.toBe(false);
  });

  it('a TLS parameter mis-cased or misspelt is refused, naming it and the known ones', () => {
    for (const key of ['SSLMODE', 'ssl_mode', 'sslMode', 'SslRootCert', 'sslcrl']) {
      const message = refusal(`${BASE}?${key}=verify-full`);
      expect(message).toContain(`parameter ${key} is not one hiresync reads`);
      expect(message).toContain('sslmode, sslrootcert, sslcert, sslkey, ssl');
      expect(message).not.toContain('s3cret-pw');
    }
  });

  it('a TLS parameter given twice is refused: hiresync and pg would read different ones', () => {
    expect(refusal(`${BASE}?sslmode=disable&sslmode=verify-full`)).toMatch(
      /parameter sslmode is given more than once/,
    );
    expect(refusal(`${BASE}?sslrootcert=/a.pem&sslmode=require&sslrootcert=/b.pem`)).toMatch(
      /parameter sslrootcert is given more than once/,
    );
  });

  it('a config error for a bad TLS parameter exits 2 before connecting', () => {
    expect(() => loadDatabaseConfig({ DATABASE_URL: `${BASE}?SSLMODE=verify-full` })).toThrow(
      ConfigError,
    );
  });

  it('drops uselibpqcompat: the modes already mean what libpq says', () => {
    expect(postgresTls(`${BASE}?sslmode=require&uselibpqcompat=true`).connectionString).toBe(BASE);
  });
});

describe('postgresTls: the files', () => {
  it('a sslrootcert that cannot be read is refused naming the parameter and the path, never the password', () => {
    const message = refusal(`${BASE}?sslmode=verify-full&sslrootcert=/no/such/ca.pem`);
    expect(message).toMatch(/sslrootcert \/no\/such\/ca\.pem cannot be read \(no such file\)/);
    expect(message).not.toContain('s3cret-pw');
  });

  it('a sslrootcert that is not a PEM certificate is refused', () => {
    expect(refusal(`${BASE}?sslmode=verify-full&sslrootcert=${client.key}`)).toMatch(
      /sslrootcert .* is not a PEM file/,
    );
  });

  it('reads sslcert and sslkey as the client certificate', () => {
    const tls = postgresTls(`${BASE}?sslmode=require&sslcert=${client.cert}&sslkey=${client.key}`);
    expect(tls.ssl).toMatchObject({
      cert: readFileSync(client.cert, 'utf8'),
      key: readFileSync(client.key, 'utf8'),
    });
  });

  it('sslcert without sslkey is refused, naming sslkey', () => {
    expect(refusal(`${BASE}?sslmode=require&sslcert=${client.cert}`)).toMatch(
      /sslcert is set without sslkey/,
    );
  });

  it("a key that is not the certificate's is refused, naming both", () => {
    expect(refusal(`${BASE}?sslmode=require&sslcert=${client.cert}&sslkey=${other.key}`)).toMatch(
      /sslcert .*client\.crt and sslkey .*other\.key do not make a client certificate/,
    );
  });

  it('every loader of DATABASE_URL reports an unreadable file as a problem of DATABASE_URL', () => {
    const missing = path.join(ca.dir, 'missing.pem');
    expect(() =>
      loadDatabaseConfig({ DATABASE_URL: `${BASE}?sslmode=verify-full&sslrootcert=${missing}` }),
    ).toThrow(`DATABASE_URL: sslrootcert ${missing} cannot be read`);
  });
});

describe('describeTlsFailure', () => {
  const verified = () => postgresTls(`${BASE}?sslmode=verify-full&sslrootcert=${ca.cert}`);
  const failure = (code: string | undefined, message: string) =>
    Object.assign(new Error(message), code ? { code } : {});

  it('a certificate that does not verify names sslrootcert and its path', () => {
    const text = describeTlsFailure(
      failure('UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'unable to verify the first certificate'),
      verified(),
    );
    expect(text).toContain(`did not verify against sslrootcert ${ca.cert}`);
    expect(text).toContain("set DATABASE_URL's sslrootcert");
  });

  it('a host name the certificate does not list names sslmode and verify-ca', () => {
    const text = describeTlsFailure(
      failure('ERR_TLS_CERT_ALTNAME_INVALID', "Hostname/IP does not match certificate's altnames"),
      verified(),
    );
    expect(text).toMatch(/sslmode=verify-full checks the host name.*sslmode=verify-ca/);
  });

  it('a server without TLS names sslmode and never suggests a fallback but disable', () => {
    const text = describeTlsFailure(
      failure(undefined, 'The server does not support SSL connections'),
      postgresTls(`${BASE}?sslmode=require`),
    );
    expect(text).toMatch(
      /does not accept TLS, and DATABASE_URL's sslmode=require never falls back/,
    );
  });

  it('a server asking for a client certificate names sslcert and sslkey', () => {
    const text = describeTlsFailure(
      failure('28000', 'connection requires a valid client certificate'),
      verified(),
    );
    expect(text).toMatch(/set DATABASE_URL's sslcert and sslkey/);
  });

  it('leaves every other failure alone', () => {
    expect(describeTlsFailure(failure('ECONNREFUSED', 'connect ECONNREFUSED'), verified())).toBe(
      undefined,
    );
    expect(describeTlsFailure(failure('28P01', 'password authentication failed'), verified())).toBe(
      undefined,
    );
  });
});
