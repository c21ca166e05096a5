import { execFile } from 'node:child_process';
import { constants, readFileSync } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import { basename, delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** The user a server runs as when it is not this process's: root drops to it. */
export interface ServerUser {
  name: string;
  uid: number;
  gid: number;
}

/** Output of a program that exited 0; else an error with its stderr. */
export function runFile(
  file: string,
  args: readonly string[],
  options: { user?: ServerUser | undefined; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      {
        timeout: options.timeoutMs ?? 60_000,
        env: options.env ?? process.env,
        ...(options.user ? { uid: options.user.uid, gid: options.user.gid } : {}),
      },
      (error, stdout, stderr) => {
        if (error) {
          const detail = String(stderr).trim() || error.message;
          reject(
            new Error(`${basename(file)} ${args[0] ?? ''} failed: ${detail}`, { cause: error }),
          );
        } else resolve(String(stdout));
      },
    );
  });
}

/**
 * True while a process with this pid runs (EPERM: it does, another user's).
 * A zombie does not: a server that pg_ctl started is reparented to PID 1,
 * and in a container PID 1 may never reap it.
 */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return !isZombie(pid);
}

/** True when /proc says `pid` has exited and waits to be reaped; false where there is no /proc. */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}

/**
 * The command line of process `pid` (its arguments joined by spaces), to
 * tell a server left behind from an unrelated process that was given its
 * pid since (the machine's own Postgres or Redis, after a reboot): /proc
 * where there is one, else ps. Undefined when it has exited, or neither can
 * tell: then it is never signalled.
 */
export async function commandOf(pid: number): Promise<string | undefined> {
  if (!isAlive(pid)) return undefined;
  try {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.split('\0').filter(Boolean).join(' ');
  } catch {
    try {
      const line = await runFile('ps', ['-ww', '-o', 'command=', '-p', String(pid)], {
        timeoutMs: 5000,
      });
      return line.trim() || undefined;
    } catch {
      return undefined;
    }
  }
}

/** Waits until process `pid` has exited; false if it still runs after `timeoutMs`. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

/**
 * Runs `cleanup`, which must be synchronous, should this process exit before
 * the returned release is called: an uncaught error, a closed stdout
 * (`| head`), process.exit. A server this process started is then stopped
 * as it ends, not left for the next run to find.
 */
export function untilExit(cleanup: () => void): () => void {
  const listener = () => {
    try {
      cleanup();
    } catch {
      // exiting anyway: the next run recovers what is left
    }
  };
  process.once('exit', listener);
  return () => {
    process.removeListener('exit', listener);
  };
}

/**
 * Calls `onGone` once the process that started this one has ended (its
 * parent pid changed): `npm run demo` killed with SIGTERM passes it to the
 * shell running the script, which ends without passing it on. Polls once a
 * second; the returned function stops watching.
 */
export function whenParentGone(onGone: () => void, intervalMs = 1000): () => void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** Sends `signal` to `pid`, ignoring a process already gone. */
export function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** The full path of `program` on PATH, if it is there and executable. */
export async function onPath(
  program: string,
  path = process.env.PATH ?? '',
): Promise<string | undefined> {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, program);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/**
 * The unprivileged user a server runs as when this process is root
 * (Postgres refuses root): `postgres` where it exists, else `nobody`.
 * Undefined when this process is not root: servers run as this user.
 */
export async function serverUser(): Promise<ServerUser | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number((await runFile('id', ['-u', name], { timeoutMs: 5000 })).trim());
      const gid = Number((await runFile('id', ['-g', name], { timeoutMs: 5000 })).trim());
      if (Number.isInteger(uid) && Number.isInteger(gid)) return { name, uid, gid };
    } catch {
      // no such user
    }
  }
  throw new Error(
    'running as root, with neither a postgres nor a nobody user for Postgres to run as (it refuses root): run as an ordinary user, or set DATABASE_URL',
  );
}

/** True when `user` may search (and with `write`, write) the folder `dir`. */
export async function userMay(user: ServerUser, dir: string, write = false): Promise<boolean> {
  try {
    await runFile('/bin/sh', ['-c', `test -x "$1"${write ? ' && test -w "$1"' : ''}`, 'sh', dir], {
      user,
      timeoutMs: 5000,
    });
    return true;
  } catch {
    return false;
  }
}
