import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';

const run = promisify(execFile);

/** One master of a {@link PrivateRedisCluster}: its client port and its process. */
interface ClusterNode {
  port: number;
  process: ChildProcess;
}

/** The arguments that give redis-cli a node's password, when it has one. */
function auth(password: string | undefined): string[] {
  return password === undefined ? [] : ['-a', password, '--no-auth-warning'];
}

async function redisCli(port: number, password: string | undefined, ...args: string[]) {
  const { stdout } = await run('redis-cli', ['-p', String(port), ...auth(password), ...args]);
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
 * `redis-cli --cluster create`, every node with `password` when one is
 * given. The bus ports are chosen free too (not the client port + 10000,
 * which may not exist).
 */
export class PrivateRedisCluster {
  readonly #dir = mkdtempSync(path.join(tmpdir(), 'hiresync-cluster-'));
  readonly #nodes: ClusterNode[] = [];

  private constructor(readonly password: string | undefined) {}

  /** The client ports of the masters. */
  get ports(): number[] {
    return this.#nodes.map((node) => node.port);
  }

  /** REDIS_URL naming every master: `redis+cluster://[:PASSWORD@]127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3`. */
  get url(): string {
    return this.urlWith(this.password);
  }

  /** REDIS_URL naming every master, with `password` (none: without one). */
  urlWith(password: string | undefined): string {
    const credentials = password === undefined ? '' : `:${encodeURIComponent(password)}@`;
    return `redis+cluster://${credentials}${this.ports.map((port) => `127.0.0.1:${port}`).join(',')}`;
  }

  /**
   * Starts `masters` masters (default 3), each with `replicas` replicas
   * (default none), and waits until every node says cluster_state:ok. A node
   * is taken for failed after 2 s (cluster-node-timeout), so that a replica
   * takes over a stopped master within seconds.
   */
  static async start({
    masters = 3,
    replicas = 0,
    password,
  }: {
    masters?: number;
    replicas?: number;
    password?: string;
  } = {}): Promise<PrivateRedisCluster> {
    const cluster = new PrivateRedisCluster(password);
    try {
      for (let i = 0; i < masters * (1 + replicas); i += 1) await cluster.#startNode();
      await run('redis-cli', [
        ...auth(password),
        '--cluster',
        'create',
        ...cluster.ports.map((port) => `127.0.0.1:${port}`),
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ]);
      for (const port of cluster.ports) {
        await until(
          async () =>
            (await redisCli(port, password, 'cluster', 'info')).includes('cluster_state:ok'),
          `node ${port} never reported cluster_state:ok`,
        );
      }
      // A replica takes over only with its master's data: one still in its first
      // sync when the master dies refuses ("Disconnected from master for longer
      // than allowed"). Ready means every replica's link is up.
      for (const port of cluster.ports) {
        await until(
          async () => {
            const replication = await redisCli(port, password, 'info', 'replication');
            return (
              !replication.includes('role:slave') || replication.includes('master_link_status:up')
            );
          },
          `replica ${port} never finished its first sync with its master`,
          600,
        );
      }
      return cluster;
    } catch (error) {
      await cluster.close();
      throw error;
    }
  }

  /**
   * Starts one node on free ports. A port found free may be taken before the
   * node binds it (an outgoing connection's ephemeral port, another test's
   * server): the node then exits, and is started again on other ports.
   */
  async #startNode(): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      const port = await freePort();
      const busPort = await freePort();
      const dir = path.join(this.#dir, String(port));
      mkdirSync(dir, { recursive: true });
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
          '--cluster-node-timeout',
          '2000',
          '--dir',
          dir,
          '--save',
          '',
          '--appendonly',
          'no',
          '--logfile',
          path.join(dir, 'redis.log'),
          ...(this.password === undefined
            ? []
            : ['--requirepass', this.password, '--masterauth', this.password]),
        ],
        { stdio: 'ignore' },
      );
      const exited = () => child.exitCode !== null || child.signalCode !== null;
      // Up to 30 s on a busy machine; at once when the node exits.
      for (let i = 0; i < 300 && !exited(); i += 1) {
        const pong = await redisCli(port, this.password, 'ping').catch(() => '');
        if (pong.trim() === 'PONG') {
          this.#nodes.push({ port, process: child });
          return;
        }
        await sleep(100);
      }
      if (!exited()) child.kill('SIGKILL');
      if (attempt === 5) throw new Error(`private redis cluster: node ${port} did not start`);
    }
  }

  /** The client port of the master serving `key`'s hash slot now; undefined while none does (a failover). */
  async masterOf(key: string): Promise<number | undefined> {
    const port = this.ports.find((p) => this.#alive(p)) as number;
    const slot = Number(await redisCli(port, this.password, 'cluster', 'keyslot', key));
    const nodes = await redisCli(port, this.password, 'cluster', 'nodes');
    for (const line of nodes.split('\n')) {
      const [, address = '', flags = '', , , , , , ...ranges] = line.split(' ');
      if (!flags.includes('master') || flags.includes('fail')) continue;
      const serves = ranges.some((range) => {
        const [from = -1, to = from] = range.split('-').map(Number);
        return slot >= from && slot <= to;
      });
      if (serves) return Number(address.split('@')[0]?.split(':')[1]);
    }
    return undefined;
  }

  #alive(port: number): boolean {
    const node = this.#nodes.find((n) => n.port === port);
    return node !== undefined && node.process.exitCode === null && node.process.signalCode === null;
  }

  /**
   * The nodes' log lines about failure detection and failover (FAIL reports,
   * elections, votes, what stops a replica taking over), each after its port:
   * what a test prints when no replica took over.
   */
  failoverLog(): string {
    return this.ports
      .flatMap((port) => {
        const file = path.join(this.#dir, String(port), 'redis.log');
        const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
        return text
          .split('\n')
          .filter((line) => /fail|elect|vote|unable|epoch/i.test(line))
          .map((line) => `${port}: ${line}`);
      })
      .join('\n');
  }

  /** Kills the node on `port` (SIGKILL: as a crash) and waits for its exit. */
  async kill(port: number): Promise<void> {
    const node = this.#nodes.find((n) => n.port === port);
    if (!node || !this.#alive(port)) return;
    const exited = new Promise((resolve) => node.process.once('exit', resolve));
    node.process.kill('SIGKILL');
    await exited;
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
