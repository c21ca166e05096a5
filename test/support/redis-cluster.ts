import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';

const run = promisify(execFile);

/** One master of a {@link PrivateRedisCluster}: its client port and its cluster bus port. */
interface ClusterNode {
  port: number;
  busPort: number;
  dir: string;
  process: ChildProcess;
}

async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-p', String(port), ...args]);
  return stdout;
}

/** Polls `check` every 100 ms until it holds, failing with `what` after `tries` tries. */
async function until(check: () => Promise<boolean>, what: string, tries = 100): Promise<void> {
  for (let i = 0; i < tries; i += 1) {
    if (await check().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`private redis cluster: ${what}`);
}

/**
 * A Redis Cluster of the test's own: three masters on loopback ports, no
 * replicas, no persistence, the slots spread over the three by
 * `redis-cli --cluster create`. The bus ports are chosen free too (not the
 * client port + 10000, which may not exist).
 */
export class PrivateRedisCluster {
  readonly #dir = mkdtempSync(path.join(tmpdir(), 'hiresync-cluster-'));
  readonly #nodes: ClusterNode[] = [];

  /** The client ports of the masters. */
  get ports(): number[] {
    return this.#nodes.map((node) => node.port);
  }

  /** REDIS_URL naming every master: `redis+cluster://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3`. */
  get url(): string {
    return `redis+cluster://${this.ports.map((port) => `127.0.0.1:${port}`).join(',')}`;
  }

  /** Whether the redis-server and redis-cli binaries are installed. */
  static async available(): Promise<boolean> {
    try {
      await run('redis-server', ['--version']);
      await run('redis-cli', ['--version']);
      return true;
    } catch {
      return false;
    }
  }

  static async start(masters = 3): Promise<PrivateRedisCluster> {
    const cluster = new PrivateRedisCluster();
    try {
      for (let i = 0; i < masters; i += 1) await cluster.#startNode();
      await run('redis-cli', [
        '--cluster',
        'create',
        ...cluster.ports.map((port) => `127.0.0.1:${port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ]);
      for (const port of cluster.ports) {
        await until(
          async () => (await redisCli(port, 'cluster', 'info')).includes('cluster_state:ok'),
          `node ${port} never reported cluster_state:ok`,
        );
      }
      return cluster;
    } catch (error) {
      await cluster.close();
      throw error;
    }
  }

  async #startNode(): Promise<void> {
    const port = await freePort();
    const busPort = await freePort();
    const dir = path.join(this.#dir, String(port));
    mkdirSync(dir);
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--cluster-port',
        String(busPort),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        path.join(dir, 'nodes.conf'),
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'no',
        '--logfile',
        path.join(dir, 'redis.log'),
      ],
      { stdio: 'ignore' },
    );
    this.#nodes.push({ port, busPort, dir, process: child });
    await until(
      async () => (await redisCli(port, 'ping')).trim() === 'PONG',
      `node ${port} did not start`,
    );
  }

  /** The server logs of every node, for a failing test to show. */
  logs(): string {
    return this.#nodes
      .map((node) => {
        try {
          return readFileSync(path.join(node.dir, 'redis.log'), 'utf8');
        } catch {
          return '';
        }
      })
      .join('\n');
  }

  /** Stops every node and deletes their files. */
  async close(): Promise<void> {
    await Promise.all(
      this.#nodes.map(async ({ process: child }) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }),
    );
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
