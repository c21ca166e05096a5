import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './ports.js';
import { PrivateRedis } from './private-servers.js';

/** The master name the Sentinels monitor. */
const MASTER = 'mymaster';
/** How long a master may not answer before a Sentinel thinks it down. */
const DOWN_AFTER_MS = 1000;

/** redis-cli against a loopback port: its reply, or undefined when the server does not answer. */
function cli(port: number, ...args: string[]): string | undefined {
  try {
    return execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 2000,
    }).trim();
  } catch {
    return undefined;
  }
}

async function until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`private sentinel setup: ${what} in time`);
    await sleep(100);
  }
}

/** One redis-server process (a data node or a Sentinel), restartable on its port. */
class Node {
  #process: ChildProcess | undefined;

  constructor(
    readonly port: number,
    readonly args: () => string[],
    /** redis-cli's arguments to authenticate (`-a PASSWORD`), when the server wants a password. */
    readonly auth: string[] = [],
  ) {}

  async start(): Promise<void> {
    this.#process = spawn('redis-server', this.args(), { stdio: 'ignore' });
    await until(
      `redis-server on ${this.port} did not start`,
      () => cli(this.port, ...this.auth, 'ping') === 'PONG',
    );
  }

  /** SIGKILL (a crashed host) or SIGTERM, waiting for the exit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.#process;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }
}

/**
 * A Redis master, one replica and three Sentinels (quorum 2) of the test's
 * own, on free loopback ports, configuration and data in a temp dir, so a
 * test or the soak can kill the master and watch the Sentinels fail over.
 * The data nodes keep an AOF (appendfsync always) as PrivateRedis does.
 */
export class PrivateSentinel {
  readonly #dir = mkdtempSync(path.join(tmpdir(), 'hiresync-sentinel-'));
  readonly #data: Node[];
  readonly #sentinels: Node[];
  /** How many failovers {@link failover} has seen through. */
  failovers = 0;

  private constructor(dataPorts: number[], sentinelPorts: number[], sentinelPassword?: string) {
    const auth =
      sentinelPassword === undefined ? [] : ['-a', sentinelPassword, '--no-auth-warning'];
    const [first] = dataPorts as [number];
    this.#data = dataPorts.map((port, i) => {
      const dir = path.join(this.#dir, `data-${port}`);
      mkdirSync(dir);
      // The first starts as the master, the other as its replica; after a
      // failover the Sentinels reconfigure whichever comes back.
      const replicaOf = i === 0 ? [] : ['--replicaof', '127.0.0.1', String(first)];
      return new Node(port, () => [
        ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir],
        ...['--appendonly', 'yes', '--appendfsync', 'always', ...replicaOf],
      ]);
    });
    this.#sentinels = sentinelPorts.map((port) => {
      const conf = path.join(this.#dir, `sentinel-${port}.conf`);
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${this.#dir}`,
          `sentinel monitor ${MASTER} 127.0.0.1 ${first} 2`,
          `sentinel down-after-milliseconds ${MASTER} ${DOWN_AFTER_MS}`,
          `sentinel failover-timeout ${MASTER} 5000`,
          `sentinel parallel-syncs ${MASTER} 1`,
          // The Sentinels' own password (REDIS_SENTINEL_PASSWORD), asked of each other too.
          ...(sentinelPassword === undefined
            ? []
            : [`requirepass ${sentinelPassword}`, `sentinel sentinel-pass ${sentinelPassword}`]),
          '',
        ].join('\n'),
      );
      // A Sentinel rewrites its configuration file: it must be its own, writable.
      return new Node(port, () => [conf, '--sentinel'], auth);
    });
  }

  /** Whether redis-server (which is also the Sentinel) is on the machine. */
  static available(): boolean {
    return PrivateRedis.available();
  }

  /** `redis+sentinel://127.0.0.1:S1,127.0.0.1:S2,127.0.0.1:S3/mymaster`: REDIS_URL of the setup. */
  get url(): string {
    const hosts = this.#sentinels.map((s) => `127.0.0.1:${s.port}`).join(',');
    return `redis+sentinel://${hosts}/${MASTER}`;
  }

  /**
   * Starts the master, the replica (in sync) and the Sentinels (each knowing
   * the others and the replica), the Sentinels asking `sentinelPassword`
   * when given.
   */
  static async start({
    sentinelPassword,
  }: {
    sentinelPassword?: string;
  } = {}): Promise<PrivateSentinel> {
    const ports: number[] = [];
    while (ports.length < 5) {
      const port = await freePort();
      if (!ports.includes(port)) ports.push(port);
    }
    const setup = new PrivateSentinel(ports.slice(0, 2), ports.slice(2), sentinelPassword);
    for (const node of setup.#data) await node.start();
    await until('the replica did not sync', () => setup.#replicaInSync());
    for (const sentinel of setup.#sentinels) await sentinel.start();
    await until('the Sentinels did not find each other and the replica', () =>
      setup.#sentinels.every((s) => {
        const master = cli(s.port, ...s.auth, 'sentinel', 'master', MASTER) ?? '';
        return /num-slaves\n1\n/.test(master) && /num-other-sentinels\n2\n/.test(master);
      }),
    );
    return setup;
  }

  /** The port of the master every Sentinel names, undefined while they disagree. */
  masterPort(): number | undefined {
    const named = this.#sentinels.map(
      (s) => cli(s.port, ...s.auth, 'sentinel', 'get-master-addr-by-name', MASTER)?.split('\n')[1],
    );
    return named.every((port) => port !== undefined && port === named[0])
      ? Number(named[0])
      : undefined;
  }

  /** The data node the Sentinels name as the master. */
  #masterNode(): Node {
    const port = this.masterPort();
    const node = this.#data.find((n) => n.port === port);
    if (!node) throw new Error('private sentinel setup: the Sentinels name no master of the setup');
    return node;
  }

  #replicaInSync(): boolean {
    const master = this.masterPort() ?? this.#data[0]?.port;
    return this.#data
      .filter((n) => n.port !== master)
      .every((n) => /master_link_status:up/.test(cli(n.port, 'info', 'replication') ?? ''));
  }

  /**
   * SIGKILLs the master (a crashed host) and waits until every Sentinel
   * names the replica as the new master; then, unless `keepDown`, starts the
   * killed server again, which the Sentinels make a replica of the new
   * master, and waits until it is in sync, so the next failover can happen.
   * Returns the new master's port.
   */
  async failover({ keepDown = false }: { keepDown?: boolean } = {}): Promise<number> {
    const old = this.#masterNode();
    await old.stop('SIGKILL');
    await until(
      'the Sentinels did not fail over',
      () => {
        const port = this.masterPort();
        return port !== undefined && port !== old.port;
      },
      60_000,
    );
    const promoted = this.masterPort() as number;
    await until('the promoted replica did not become a master', () =>
      /role:master/.test(cli(promoted, 'info', 'replication') ?? ''),
    );
    this.failovers += 1;
    if (!keepDown) {
      await old.start();
      await until(
        'the old master did not rejoin as a replica',
        () => this.#replicaInSync(),
        60_000,
      );
    }
    return promoted;
  }

  /** The server at `port`'s reply to a command (redis-cli), for a test's look at the master. */
  command(port: number, ...args: string[]): string | undefined {
    return cli(port, ...args);
  }

  async close(): Promise<void> {
    for (const node of [...this.#sentinels, ...this.#data]) await node.stop('SIGKILL');
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
