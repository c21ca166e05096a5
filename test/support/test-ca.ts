import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

/** A certificate authority of a test's own: its PEM files in `dir`. */
export interface TestCa {
  dir: string;
  /** The CA's certificate (PEM): what a client is told to trust. */
  certFile: string;
  keyFile: string;
  name: string;
}

/** A certificate issued by a {@link TestCa}, with its key. */
export interface IssuedCert {
  certFile: string;
  keyFile: string;
}

/** The names a certificate is issued for (its subjectAltName). */
export interface CertNames {
  dns?: string[];
  ips?: string[];
  /** The subject's CN; default the first name, else the file's name. */
  commonName?: string;
}

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * Makes a CA (a self-signed certificate and its key) in `dir` with openssl,
 * under `name` (the files `<name>.crt`, `<name>.key`); two CAs of one name in
 * two folders are two unrelated CAs, which is what a "wrong CA" test needs.
 */
export function makeCa(dir: string, name = 'test-ca'): TestCa {
  const certFile = path.join(dir, `${name}.crt`);
  const keyFile = path.join(dir, `${name}.key`);
  openssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
    '-keyout',
    keyFile,
    '-out',
    certFile,
  ]);
  return { dir, certFile, keyFile, name };
}

/**
 * Issues a certificate signed by `ca` for `names` (subjectAltName DNS and IP
 * entries; a client verifies the host it dials against them), with its key,
 * as `<ca dir>/<file>.crt` and `.key`.
 */
export function issueCert(ca: TestCa, names: CertNames, file = 'server'): IssuedCert {
  const certFile = path.join(ca.dir, `${file}.crt`);
  const keyFile = path.join(ca.dir, `${file}.key`);
  const csr = path.join(ca.dir, `${file}.csr`);
  const ext = path.join(ca.dir, `${file}.ext`);
  const alt = [
    ...(names.dns ?? []).map((name) => `DNS:${name}`),
    ...(names.ips ?? []).map((ip) => `IP:${ip}`),
  ];
  writeFileSync(
    ext,
    `${alt.length > 0 ? `subjectAltName=${alt.join(',')}\n` : ''}basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n`,
  );
  const subject = `/CN=${names.commonName ?? names.dns?.[0] ?? names.ips?.[0] ?? file}`;
  openssl([
    'req',
    '-new',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    subject,
    '-keyout',
    keyFile,
    '-out',
    csr,
  ]);
  openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca.certFile,
    '-CAkey',
    ca.keyFile,
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    ext,
    '-out',
    certFile,
  ]);
  return { certFile, keyFile };
}
