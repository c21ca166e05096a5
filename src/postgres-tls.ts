/**
 * TLS to Postgres as DATABASE_URL's libpq parameters say (`sslmode`,
 * `sslrootcert`, `sslcert`, `sslkey`), turned into node-postgres's options in
 * this one place, and the failures of TLS explained in terms of them.
 *
 * node-postgres (pg-connection-string 2.x) reads `sslmode=require` as
 * verify-full, where libpq means "encrypted, not verified", and its
 * `uselibpqcompat=true` mode still reads files with bare errors, takes
 * `allow` for verify-full and an unknown mode for TLS: so the URL's TLS
 * parameters are read here, taken out of the URL, and given to pg as its
 * `ssl` option. The meanings (docs/operating.md, "Postgres TLS"):
 *
 * - `disable`: plain text.
 * - `require` (and `prefer`, `allow`, which never fall back to plain text
 *   here): encrypted, the certificate not verified; with `sslrootcert`, as
 *   libpq does, verified against it as `verify-ca`.
 * - `verify-ca`: the certificate verified against `sslrootcert` (required),
 *   the host name not checked.
 * - `verify-full`: the certificate verified against `sslrootcert` (unset or
 *   `system`: the system's CA certificates) and issued for the host.
 * - `no-verify` (node-postgres's own): encrypted, not verified.
 * - no `sslmode`: `ssl=true` or any of the file parameters, verify-full (as
 *   node-postgres did); none, pg's default (plain text).
 * - a Unix-domain socket: plain text whatever the mode, as libpq.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type ConnectionOptions, createSecureContext } from 'node:tls';
import { ConfigError } from './errors.js';

/** The modes of `sslmode` and what each checks, once `allow`/`prefer` are read as `require`. */
const MODES = {
  disable: 'disable',
  allow: 'require',
  prefer: 'require',
  require: 'require',
  'verify-ca': 'verify-ca',
  'verify-full': 'verify-full',
  'no-verify': 'no-verify',
} as const;

/** What the connection checks: none (plain text), encryption only, the CA, the CA and the host. */
export type TlsCheck = 'plain' | 'encrypted' | 'verify-ca' | 'verify-full';

/** The parameters of DATABASE_URL read here (and taken out of the URL given to pg). */
const TLS_PARAMETERS = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'ssl', 'uselibpqcompat'];

/** What {@link postgresTls} made of a DATABASE_URL. */
export interface PostgresTls {
  /** The URL without its TLS parameters: pg's `connectionString`. */
  connectionString: string;
  /** pg's `ssl`: false for plain text; undefined when the URL says nothing of TLS (pg's default). */
  ssl: false | ConnectionOptions | undefined;
  /** What the connection checks; undefined when the URL says nothing of TLS. */
  check: TlsCheck | undefined;
  /** `sslmode` as written, for messages. */
  sslmode: string | undefined;
  /** The paths given. */
  sslrootcert: string | undefined;
  sslcert: string | undefined;
  sslkey: string | undefined;
  /** Set when the server's certificate is not verified: the warning to log once. */
  unverified: string | undefined;
}

/** Reads a file named by a parameter; throws as fs does. */
export type ReadFile = (path: string) => string;

const readUtf8: ReadFile = (path) => readFileSync(path, 'utf8');

function problem(message: string): ConfigError {
  return new ConfigError([{ variable: 'DATABASE_URL', message }]);
}

/** The query string's parameters, the rest of the URL left exactly as written. */
function splitQuery(url: string): { base: string; params: [string, string][] } {
  const hash = url.indexOf('#');
  const withoutHash = hash < 0 ? url : url.slice(0, hash);
  const at = withoutHash.indexOf('?');
  if (at < 0) return { base: withoutHash, params: [] };
  return {
    base: withoutHash.slice(0, at),
    params: [...new URLSearchParams(withoutHash.slice(at + 1)).entries()],
  };
}

function rejoin(base: string, params: readonly [string, string][]): string {
  return params.length === 0 ? base : `${base}?${new URLSearchParams(params).toString()}`;
}

function reason(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'a directory, not a file';
  return typeof code === 'string' ? code : 'unreadable';
}

/** The PEM text of the file `parameter` names; a ConfigError naming both when it is not one. */
function readPem(parameter: string, path: string, readFile: ReadFile, marker: RegExp): string {
  let text: string;
  try {
    text = readFile(path);
  } catch (error) {
    throw problem(`${parameter} ${path} cannot be read (${reason(error)}): check the path`);
  }
  if (!marker.test(text)) {
    throw problem(
      `${parameter} ${path} is not a PEM file (no ${marker.source.replace(/\\/g, '')})`,
    );
  }
  return text;
}

/**
 * The parser pg itself reads a connection string with: pg's own dependency,
 * resolved from pg, so that "is this a socket" is pg's reading of the URL.
 */
const pgConnectionString = createRequire(createRequire(import.meta.url).resolve('pg'))(
  'pg-connection-string',
) as { parse(url: string): { host?: string | null } };

/**
 * Does pg connect to a Unix-domain socket (the host it parses a path, from
 * the URL or its `host` parameter)? pg's parse, never a pattern of ours: a
 * password with `@` or `%2F` in it must not read as a socket host.
 */
function isSocket(connectionString: string): boolean {
  try {
    return pgConnectionString.parse(connectionString).host?.startsWith('/') ?? false;
  } catch {
    // pg will refuse the URL itself; it names no socket.
    return false;
  }
}

/**
 * A ConfigError for a TLS parameter hiresync would not read as pg does: one
 * that starts with `ssl` but is not a name read here (`SSLMODE`,
 * `ssl_mode`, `sslcrl`: ignored, they would leave the connection in plain
 * text or unchecked), or one given twice (hiresync and pg would each take a
 * different one).
 */
function checkParameterNames(params: readonly [string, string][]): void {
  const known = TLS_PARAMETERS.join(', ');
  const seen = new Set<string>();
  for (const [key] of params) {
    if (/^ssl/i.test(key) && !TLS_PARAMETERS.includes(key)) {
      throw problem(
        `parameter ${key} is not one hiresync reads (TLS parameters are lower case: ${known}): fix its name or remove it`,
      );
    }
    if (!TLS_PARAMETERS.includes(key)) continue;
    if (seen.has(key)) {
      throw problem(`parameter ${key} is given more than once: give it once`);
    }
    seen.add(key);
  }
}

function modeOf(sslmode: string | undefined, ssl: string | undefined, files: boolean) {
  if (sslmode !== undefined) {
    const mode = (MODES as Record<string, (typeof MODES)[keyof typeof MODES]>)[sslmode];
    if (mode === undefined) {
      throw problem(
        `sslmode=${sslmode} is not a mode: use disable, require, verify-ca or verify-full`,
      );
    }
    return mode;
  }
  if (ssl === 'true' || ssl === '1') return 'verify-full';
  if (ssl === 'false' || ssl === '0') return 'disable';
  if (ssl !== undefined) throw problem(`ssl=${ssl} is not true or false: use sslmode instead`);
  return files ? 'verify-full' : undefined;
}

/**
 * DATABASE_URL's TLS parameters as pg's options; the files they name read
 * with `readFile`. Throws a ConfigError naming the parameter (and the path,
 * never the password) for an unknown mode, a file that cannot be read or is
 * not PEM, a client certificate without its key (or one not matching it),
 * or `verify-ca` without `sslrootcert`.
 */
export function postgresTls(url: string, readFile: ReadFile = readUtf8): PostgresTls {
  const { base, params } = splitQuery(url);
  checkParameterNames(params);
  const value = (name: string) => params.find(([key]) => key === name)?.[1];
  const sslmode = value('sslmode');
  const sslrootcert = value('sslrootcert') || undefined;
  const sslcert = value('sslcert') || undefined;
  const sslkey = value('sslkey') || undefined;
  const mode = modeOf(sslmode, value('ssl'), Boolean(sslrootcert || sslcert || sslkey));
  const given = { sslmode, sslrootcert, sslcert, sslkey };
  if (mode === undefined) {
    return {
      connectionString: url,
      ssl: undefined,
      check: undefined,
      unverified: undefined,
      ...given,
    };
  }
  const connectionString = rejoin(
    base,
    params.filter(([key]) => !TLS_PARAMETERS.includes(key)),
  );
  const system = sslrootcert === 'system';
  if (system && mode !== 'verify-full') {
    throw problem(
      `sslrootcert=system (the system's CA certificates) needs sslmode=verify-full: anyone may get a certificate from a public CA, only the host name tells the server apart`,
    );
  }
  // A Unix-domain socket (`host=/run/postgresql`) never carries TLS: libpq
  // ignores sslmode there, and the server would refuse the TLS request.
  if (mode === 'disable' || isSocket(connectionString)) {
    return { connectionString, ssl: false, check: 'plain', unverified: undefined, ...given };
  }
  if (mode === 'verify-ca' && sslrootcert === undefined) {
    throw problem(
      "sslmode=verify-ca needs sslrootcert, the CA certificate (PEM) that signed the server's certificate (or use sslmode=verify-full to check the host name against the system's CAs)",
    );
  }
  if ((sslcert === undefined) !== (sslkey === undefined)) {
    throw problem(
      sslcert === undefined
        ? 'sslkey is set without sslcert: give both, the client certificate and its key (PEM)'
        : 'sslcert is set without sslkey: give both, the client certificate and its key (PEM)',
    );
  }
  const ssl: ConnectionOptions = {};
  const verifies = mode !== 'no-verify';
  if (sslrootcert !== undefined && !system && verifies) {
    ssl.ca = readPem('sslrootcert', sslrootcert, readFile, /-----BEGIN CERTIFICATE-----/);
    try {
      createSecureContext({ ca: ssl.ca });
    } catch (error) {
      throw problem(
        `sslrootcert ${sslrootcert} is not a CA certificate (${(error as Error).message}): give the CA certificate (PEM) that signed the server's certificate`,
      );
    }
  }
  if (sslcert !== undefined && sslkey !== undefined) {
    ssl.cert = readPem('sslcert', sslcert, readFile, /-----BEGIN CERTIFICATE-----/);
    ssl.key = readPem('sslkey', sslkey, readFile, /-----BEGIN [A-Z ]*PRIVATE KEY-----/);
    try {
      createSecureContext({ cert: ssl.cert, key: ssl.key });
    } catch (error) {
      throw problem(
        `sslcert ${sslcert} and sslkey ${sslkey} do not make a client certificate (${(error as Error).message}): give the certificate and its own unencrypted key`,
      );
    }
  }
  let check: TlsCheck = mode === 'verify-full' ? 'verify-full' : 'verify-ca';
  if (!verifies || (mode === 'require' && ssl.ca === undefined)) {
    check = 'encrypted';
    ssl.rejectUnauthorized = false;
  } else if (check === 'verify-ca') {
    // The chain is verified against `ca`; the host name is not checked.
    ssl.checkServerIdentity = () => undefined;
  }
  const unverified =
    check === 'encrypted'
      ? `DATABASE_URL's sslmode=${sslmode ?? 'require'}: the connection to Postgres is encrypted, but the server's certificate is not verified (anyone on the path could stand in for the server); to verify it, set sslmode=verify-full and sslrootcert to the server's CA certificate (PEM)`
      : undefined;
  return { connectionString, ssl, check, unverified, ...given };
}

/** Node's codes of a server certificate that did not verify against the CAs. */
const UNVERIFIED_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'INVALID_CA',
  'INVALID_PURPOSE',
]);

function messageOf(error: unknown): string {
  return (error as { message?: unknown }).message?.toString() ?? String(error);
}

/**
 * A failure to connect that TLS (or its absence) caused, explained in terms
 * of DATABASE_URL's parameter to change and how; undefined for any other.
 */
export function describeTlsFailure(error: unknown, tls: PostgresTls): string | undefined {
  const code = (error as { code?: unknown }).code;
  const message = messageOf(error);
  const sslmode = `sslmode=${tls.sslmode ?? (tls.check === 'plain' ? 'disable' : 'verify-full')}`;
  if (typeof code === 'string' && UNVERIFIED_CODES.has(code)) {
    const against =
      tls.sslrootcert === undefined || tls.sslrootcert === 'system'
        ? "the system's CA certificates (no sslrootcert)"
        : `sslrootcert ${tls.sslrootcert}`;
    return `the Postgres server's certificate did not verify against ${against} (${message}; ${sslmode}): set DATABASE_URL's sslrootcert to the CA certificate (PEM) that signed the server's certificate`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return `the Postgres server's certificate is not issued for the host of DATABASE_URL (${message}); ${sslmode} checks the host name: connect by a name the certificate lists, or set sslmode=verify-ca to verify the CA only`;
  }
  if (message === 'The server does not support SSL connections') {
    return `the Postgres server does not accept TLS, and DATABASE_URL's ${sslmode} never falls back to plain text: turn on ssl on the server, or set sslmode=disable to connect in plain text`;
  }
  if (code === '28000' && /requires a valid client certificate/.test(message)) {
    return `the Postgres server requires a client certificate (${message}): set DATABASE_URL's sslcert and sslkey to the client certificate and its key (PEM)`;
  }
  if (code === '28000' && /certificate authentication failed/.test(message)) {
    return `the Postgres server refused the client certificate sslcert ${tls.sslcert ?? '(none)'} (${message}): its common name must be the user name of DATABASE_URL`;
  }
  if (code === '28000' && /no encryption/.test(message) && (tls.check ?? 'plain') === 'plain') {
    return `the Postgres server accepts only TLS connections (${message}): set DATABASE_URL's sslmode (verify-full with sslrootcert, or require)`;
  }
  if (typeof code === 'string' && /^ERR_SSL_.*ALERT/.test(code)) {
    return `the Postgres server ended the TLS handshake (${message}): ${tls.sslcert === undefined ? "it may require a client certificate: set DATABASE_URL's sslcert and sslkey" : `check that the CA of the server's ssl_ca_file signed sslcert ${tls.sslcert}`}`;
  }
  if (
    tls.check !== undefined &&
    tls.check !== 'plain' &&
    typeof code === 'string' &&
    /^(ERR_SSL_|ERR_TLS_|EPROTO$)/.test(code)
  ) {
    return `TLS with the Postgres server failed (${message}): check DATABASE_URL's ${sslmode}, sslrootcert, sslcert and sslkey`;
  }
  return undefined;
}
