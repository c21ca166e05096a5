import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { appendFile, readFile, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { liveHolder, ownFolder, writeHolder } from './instance-dir.js';
import type { PostgresBinaries } from './postgres-binaries.js';
import {
  commandOf,
  runFile,
  type ServerUser,
  signal,
  untilExit,
  waitForExit,
} from './processes.js';
import { answersOn, freeLoopbackPort } from './tcp.js';

/** Where and how an embedded Postgres runs. */
export interface EmbeddedPostgresOptions {
  /** The server's folder: its cluster (data/), its log (server.log) and its holder. */
  dir: string;
  binaries: PostgresBinaries;
  /** The user it runs as when this process is root; undefined: this process's. */
  user: ServerUser | undefined;
}

/** A running embedded Postgres, loopback only, user `postgres` with trust authentication. */
export interface EmbeddedPostgres {
  /** Its `postgres` database, as superuser `postgres`. */
  url: string;
  port: number;
  pid: number;
  dir: string;
  /** It was running already, left by an earlier run (kept, or its demo killed). */
  reused: boolean;
  /** Stops it (fast shutdown: connections are ended) and forgets its holder. */
  stop(): Promise<void>;
  /** Leaves it running after this process; the next run reuses it. */
  keep(): Promise<void>;
}

/**
 * The settings of an embedded cluster: TCP on loopback only and no Unix
 * socket (no path to share with a system Postgres); fsync off, as its data
 * are the demo's or the tests' to make again.
 */
const SETTINGS = `
# hiresync: an embedded server for the demo and the tests (src/local-services)
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
fsync = off
synchronous_commit = off
full_page_writes = off
`;

/**
 * Starts the embedded Postgres of `options.dir`, or reuses the one running
 * there. What an earlier run left is recovered, never left to fail this
 * one: a server of a killed demo still running is reused; a postmaster.pid
 * of a process that is gone (or a pid given since to another program) is
 * removed; a server that no longer answers is stopped; a cluster of another
 * major version, or one that will not start, is made again. Refused while
 * another live process holds the folder.
 */
export async function startEmbeddedPostgres(o: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  await ownFolder(o.dir, o.user);
  const other = await liveHolder(o.dir);
  if (other !== undefined) {
    throw new Error(
      `another hiresync process (pid ${other}) is using the embedded Postgres in ${o.dir}: wait for it to end`,
    );
  }
  await writeHolder(o.dir, { pid: process.pid });
  const running = await runningServer(o.dir);
  if (running) {
    if (await answersOn('127.0.0.1', running.port)) return handle(o, running, true);
    await stopServer(o, running.pid);
  }
  return handle(o, await startServer(o), false);
}

/**
 * The server running in `dir` according to its postmaster.pid, when that
 * process is a live postgres; a postmaster.pid of anything else is stale
 * and removed.
 */
export async function runningServer(
  dir: string,
): Promise<{ pid: number; port: number } | undefined> {
  const pidFile = join(dir, 'data', 'postmaster.pid');
  let lines: string[];
  try {
    lines = (await readFile(pidFile, 'utf8')).split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if ((await servesData(pid, dir)) && port > 0) return { pid, port };
  await unlink(pidFile).catch(() => {});
  return undefined;
}

/** True when process `pid` is a postgres of the cluster in `dir` (its command line says `-D dir/data`). */
async function servesData(pid: number, dir: string): Promise<boolean> {
  return (await commandOf(pid))?.includes(`-D ${join(dir, 'data')}`) === true;
}

/** Stops whatever server runs in `dir` (a leftover's), as `user`. */
export async function stopLeftover(
  dir: string,
  binaries: PostgresBinaries,
  user: ServerUser | undefined,
): Promise<void> {
  const running = await runningServer(dir);
  if (running) await stopServer({ dir, binaries, user }, running.pid);
}

function handle(
  o: EmbeddedPostgresOptions,
  server: { pid: number; port: number },
  reused: boolean,
): EmbeddedPostgres {
  const release = untilExit(() => {
    spawnSync(o.binaries.pgCtl, ['stop', '-D', join(o.dir, 'data'), '-m', 'fast', '-w', '-s'], {
      timeout: 30_000,
      stdio: 'ignore',
      ...(o.user ? { uid: o.user.uid, gid: o.user.gid } : {}),
    });
    rmSync(join(o.dir, 'holder.json'), { force: true });
  });
  return {
    url: `postgres://postgres@127.0.0.1:${server.port}/postgres`,
    port: server.port,
    pid: server.pid,
    dir: o.dir,
    reused,
    stop: async () => {
      await stopServer(o, server.pid);
      await rm(join(o.dir, 'holder.json'), { force: true });
      release();
    },
    keep: async () => {
      release();
      await writeHolder(o.dir, { pid: server.pid, kept: true });
    },
  };
}

async function startServer(o: EmbeddedPostgresOptions): Promise<{ pid: number; port: number }> {
  const data = join(o.dir, 'data');
  const made = (await clusterMajor(data)) !== o.binaries.major;
  if (made) await initCluster(o);
  try {
    return await launch(o);
  } catch (error) {
    if (made) throw error;
    // The demo's own cluster that no longer starts (a crash with fsync off,
    // a full disk since freed): its data are made again by every demo.
    await initCluster(o);
    return await launch(o);
  }
}

/** PG_VERSION of the cluster in `data`, or undefined where there is none. */
async function clusterMajor(data: string): Promise<number | undefined> {
  try {
    return Number.parseInt(await readFile(join(data, 'PG_VERSION'), 'utf8'), 10);
  } catch {
    return undefined;
  }
}

async function initCluster(o: EmbeddedPostgresOptions): Promise<void> {
  const data = join(o.dir, 'data');
  await rm(data, { recursive: true, force: true });
  await runFile(
    o.binaries.initdb,
    [
      `--pgdata=${data}`,
      '--auth=trust',
      '--username=postgres',
      '--encoding=UTF8',
      ...(await localeFlags()),
      '--no-sync',
    ],
    { user: o.user },
  );
  await appendFile(join(data, 'postgresql.conf'), SETTINGS);
}

/** C.UTF-8 where the system has it (as Debian's clusters), else the C locale. */
async function localeFlags(): Promise<string[]> {
  try {
    const locales = (await runFile('locale', ['-a'], { timeoutMs: 5000 })).toLowerCase();
    if (/^c\.utf-?8$/m.test(locales)) return ['--locale=C.UTF-8'];
  } catch {
    // no locale program: the C locale
  }
  return ['--no-locale'];
}

/** pg_ctl start on a free loopback port; once more on another port should that one be taken. */
async function launch(
  o: EmbeddedPostgresOptions,
  attempt = 1,
): Promise<{ pid: number; port: number }> {
  const data = join(o.dir, 'data');
  const log = join(o.dir, 'server.log');
  const port = await freeLoopbackPort();
  try {
    await runFile(
      o.binaries.pgCtl,
      ['start', '-D', data, '-l', log, '-w', '-t', '60', '-s', '-o', `-p ${port}`],
      { user: o.user, timeoutMs: 90_000 },
    );
  } catch (error) {
    const tail = (await readFile(log, 'utf8').catch(() => '')).trim().split('\n').slice(-5);
    if (attempt === 1 && tail.some((l) => l.includes('could not bind'))) return launch(o, 2);
    throw new Error(
      `the embedded Postgres in ${o.dir} did not start: ${(error as Error).message}; its log ends: ${tail.join(' | ')}`,
      { cause: error },
    );
  }
  const running = await runningServer(o.dir);
  if (!running)
    throw new Error(`the embedded Postgres in ${o.dir} started, then stopped: see ${log}`);
  return running;
}

/** pg_ctl stop (fast: sessions are ended); SIGQUIT should it not stop within 30 s. */
async function stopServer(o: EmbeddedPostgresOptions, pid: number): Promise<void> {
  const data = join(o.dir, 'data');
  await runFile(o.binaries.pgCtl, ['stop', '-D', data, '-m', 'fast', '-w', '-t', '30', '-s'], {
    user: o.user,
    timeoutMs: 45_000,
  }).catch(() => {});
  if (await servesData(pid, o.dir)) {
    signal(pid, 'SIGQUIT');
    await waitForExit(pid, 10_000);
  }
}
