import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sweepLeftovers, writeHolder } from './instance-dir.js';
import { commandOf, isAlive, signal, untilExit, waitForExit } from './processes.js';
import { freeLoopbackPort, redisAnswers } from './tcp.js';

/** A redis-server of this process's own, on a loopback port, keeping nothing on disk. */
export interface PrivateRedis {
  url: string;
  port: number;
  pid: number;
  /** Its temporary folder (log, pid file), removed when it stops. */
  dir: string;
  stop(): Promise<void>;
}

/** The prefix of private Redis folders under the temporary directory. */
export const REDIS_DIR_PREFIX = 'hiresync-private-redis-';

/**
 * Starts `redisServer` on a free loopback port, without persistence
 * (`--save "" --appendonly no`), in a temporary folder of its own. First
 * stops and removes what killed runs left: folders whose holder process is
 * gone, and the redis-server their pid file names, if still running.
 */
export async function startPrivateRedis(
  redisServer: string,
  parent = tmpdir(),
): Promise<PrivateRedis> {
  await sweepLeftovers(parent, REDIS_DIR_PREFIX, stopLeftoverRedis);
  const dir = await mkdtemp(join(parent, REDIS_DIR_PREFIX));
  await writeHolder(dir, { pid: process.pid });
  try {
    return await launch(redisServer, dir, 1);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Stops the redis-server named by the pid file in `dir` ("PID PORT"), if it
 * still runs: a redis-server serving that port (Redis shows it in its
 * command line), not one that was given the pid since.
 */
export async function stopLeftoverRedis(dir: string): Promise<void> {
  const [pid, port] = (await readFile(join(dir, 'redis.pid'), 'utf8').catch(() => ''))
    .trim()
    .split(' ')
    .map(Number);
  if (!pid || !port) return;
  const command = await commandOf(pid);
  const [program = '', address = ''] = command?.split(' ') ?? [];
  if (program.endsWith('redis-server') && address.endsWith(`:${port}`)) await stopProcess(pid);
}

async function launch(redisServer: string, dir: string, attempt: number): Promise<PrivateRedis> {
  const port = await freeLoopbackPort();
  const log = join(dir, 'redis.log');
  // Its own process group: a Ctrl-C reaches this process, which stops it in order.
  const child = spawn(
    redisServer,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--logfile',
      log,
      '--daemonize',
      'no',
    ],
    { detached: true, stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  const pid = child.pid;
  if (pid === undefined) {
    await exited;
    throw new Error(`cannot run ${redisServer}`);
  }
  await writeFile(join(dir, 'redis.pid'), `${pid} ${port}\n`);
  const ready = await Promise.race([waitUntilAnswering(port), exited.then(() => false)]);
  if (!ready) {
    await stopProcess(pid);
    const tail = (await readFile(log, 'utf8').catch(() => '')).trim().split('\n').slice(-3);
    if (attempt === 1 && tail.some((l) => /Address already in use/i.test(l))) {
      return launch(redisServer, dir, 2);
    }
    throw new Error(`${redisServer} did not start on 127.0.0.1:${port}: ${tail.join(' | ')}`);
  }
  const release = untilExit(() => {
    signal(pid, 'SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid,
    dir,
    stop: async () => {
      await stopProcess(pid);
      await exited;
      await rm(dir, { recursive: true, force: true });
      release();
    },
  };
}

async function waitUntilAnswering(port: number): Promise<boolean> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (await redisAnswers('127.0.0.1', port)) return true;
    await sleep(25);
  }
  return false;
}

/** SIGTERM (Redis shuts down, saving nothing here); SIGKILL after 10 s. */
async function stopProcess(pid: number): Promise<void> {
  if (!isAlive(pid)) return;
  signal(pid, 'SIGTERM');
  if (!(await waitForExit(pid, 10_000))) signal(pid, 'SIGKILL');
}
