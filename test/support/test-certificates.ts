import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A test CA made with `openssl` in a folder of its own, which signs server and client certificates. */
export interface TestCa {
  /** The folder holding every file made. */
  dir: string;
  /** The CA's certificate (PEM). */
  cert: string;
  /** A certificate (and its key) signed by this CA, in `dir`. */
  issue(name: string, options: { subjectAltName?: string; commonName: string }): IssuedCertificate;
}

export interface IssuedCertificate {
  cert: string;
  key: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'ignore' });
}

/** Makes a CA (RSA 2048, one day) named `name` in a new temporary folder. */
export function makeTestCa(name: string): TestCa {
  const dir = mkdtempSync(path.join(tmpdir(), `hiresync-ca-${name}-`));
  const cert = path.join(dir, `${name}.crt`);
  const key = path.join(dir, `${name}.key`);
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      `/CN=${name}`,
      '-keyout',
      key,
      '-out',
      cert,
    ],
    dir,
  );
  return {
    dir,
    cert,
    issue(leaf, { subjectAltName, commonName }) {
      const leafKey = path.join(dir, `${leaf}.key`);
      const request = path.join(dir, `${leaf}.csr`);
      const leafCert = path.join(dir, `${leaf}.crt`);
      const extensions = path.join(dir, `${leaf}.ext`);
      writeFileSync(extensions, subjectAltName ? `subjectAltName=${subjectAltName}\n` : '\n');
      openssl(
        [
          'req',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-subj',
          `/CN=${commonName}`,
          '-keyout',
          leafKey,
          '-out',
          request,
        ],
        dir,
      );
      openssl(
        [
          'x509',
          '-req',
          '-in',
          request,
          '-CA',
          cert,
          '-CAkey',
          key,
          '-CAcreateserial',
          '-days',
          '1',
          '-extfile',
          extensions,
          '-out',
          leafCert,
        ],
        dir,
      );
      return { cert: leafCert, key: leafKey };
    },
  };
}
