import { createHash } from 'node:crypto';
import { chmod, chown, lstat, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive, type ServerUser, userMay } from './processes.js';

/**
 * Who holds a server's folder: the process that started or reused the
 * server, and whether the server was kept running after it (`demo --keep`).
 * A folder whose holder is gone and not kept was left by a killed process:
 * the next run stops what still runs there and reuses or removes the folder.
 */
export interface Holder {
  pid: number;
  kept?: boolean;
}

const HOLDER_FILE = 'holder.json';

/** The holder written in `dir`, if any (an unreadable record counts as none). */
export async function readHolder(dir: string): Promise<Holder | undefined> {
  try {
    const parsed = JSON.parse(await readFile(join(dir, HOLDER_FILE), 'utf8')) as Partial<Holder>;
    return typeof parsed.pid === 'number'
      ? { pid: parsed.pid, kept: parsed.kept === true }
      : undefined;
  } catch {
    return undefined;
  }
}

export async function writeHolder(dir: string, holder: Holder): Promise<void> {
  await writeFile(join(dir, HOLDER_FILE), `${JSON.stringify(holder)}\n`, { mode: 0o644 });
}

/** The pid of a live process, not this one, that holds `dir` (not kept); else undefined. */
export async function liveHolder(dir: string): Promise<number | undefined> {
  const holder = await readHolder(dir);
  if (!holder || holder.kept || holder.pid === process.pid) return undefined;
  return isAlive(holder.pid) ? holder.pid : undefined;
}

/**
 * Makes `dir` a folder of `user`'s (root drops to it) or of this process's
 * user, mode 0700: Postgres refuses a data folder others can read.
 */
export async function ownFolder(dir: string, user: ServerUser | undefined): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  if (user) await chown(dir, user.uid, user.gid);
  await chmod(dir, 0o700);
}

/**
 * Where the demo keeps its embedded Postgres from run to run: `.hiresync/`
 * in the checkout `root` (gitignored) when this process may write there and
 * the server's `user` (root's stand-in) may reach it; else a folder of this
 * user's under the system's temporary directory, named after the checkout
 * (root's private home, a read-only checkout).
 */
export async function stateDir(root: string, user: ServerUser | undefined): Promise<string> {
  const inCheckout = join(root, '.hiresync');
  try {
    await mkdir(inCheckout, { recursive: true, mode: 0o755 });
    await writeFile(join(inCheckout, '.probe'), '');
    await rm(join(inCheckout, '.probe'));
    if (!user || (await userMay(user, inCheckout))) return inCheckout;
  } catch {
    // not writable here: the temporary directory it is
  }
  const uid = process.getuid?.() ?? 0;
  const hash = createHash('sha256').update(root).digest('hex').slice(0, 10);
  const dir = join(tmpdir(), `hiresync-${uid}-${hash}`);
  await mkdir(dir, { recursive: true, mode: user ? 0o711 : 0o700 });
  const stat = await lstat(dir);
  // Anyone may create folders in /tmp: use only one of this user's own.
  if (!stat.isDirectory() || stat.uid !== uid || (stat.mode & 0o022) !== 0) {
    throw new Error(`${dir} is not a folder of this user's alone: remove it and run again`);
  }
  return dir;
}

/**
 * Removes the folders `prefix*` in `parent` left by processes that are gone
 * (killed before they could clean up), after `stop` has stopped what still
 * runs in each. Folders of live processes, and of kept servers, are left.
 */
export async function sweepLeftovers(
  parent: string,
  prefix: string,
  stop: (dir: string) => Promise<void>,
): Promise<string[]> {
  const names = await readdir(parent).catch(() => [] as string[]);
  const swept: string[] = [];
  for (const name of names.filter((n) => n.startsWith(prefix))) {
    const dir = join(parent, name);
    const holder = await readHolder(dir);
    // No holder: not a folder of these servers (or one being set up this instant).
    if (!holder || holder.kept || isAlive(holder.pid)) continue;
    await stop(dir).catch(() => {});
    await rm(dir, { recursive: true, force: true }).catch(() => {});
    swept.push(dir);
  }
  return swept;
}
