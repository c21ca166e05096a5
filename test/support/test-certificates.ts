import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { issueCert, makeCa } from './test-ca.js';

/** A test CA in a temporary folder of its own (test-ca.ts), issuing by name. */
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

/** Makes a CA named `name` in a new temporary folder. */
export function makeTestCa(name: string): TestCa {
  const dir = mkdtempSync(path.join(tmpdir(), `hiresync-ca-${name}-`));
  const ca = makeCa(dir, name);
  return {
    dir,
    cert: ca.certFile,
    issue(leaf, { subjectAltName, commonName }) {
      const alt = (subjectAltName ?? '').split(',').filter((entry) => entry !== '');
      const of = (kind: string) =>
        alt
          .filter((entry) => entry.startsWith(`${kind}:`))
          .map((entry) => entry.slice(kind.length + 1));
      const issued = issueCert(ca, { dns: of('DNS'), ips: of('IP'), commonName }, leaf);
      return { cert: issued.certFile, key: issued.keyFile };
    },
  };
}
