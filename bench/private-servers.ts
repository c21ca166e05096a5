import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './ports.js';

/**
 * A Redis server of the test's own, with AOF persistence (as BullMQ wants in
 * production), so it can be restarted without touching the shared one.
 */
export class PrivateRedis {
  readonly url: string;
  #process: ChildProcess | undefined;
  readonly #dir = mkdtempSync(path.join(tmpdir(), 'hiresync-redis-'));

  private constructor(
    readonly port: number,
    readonly bind: string,
  ) {
    this.url = `redis://${bind}:${port}`;
  }

  static available(): boolean {
    try {
      execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  }

  /** `bind`: the address it listens on besides 127.0.0.1, and its URL's (another host's reach). */
  static async start(options: { bind?: string } = {}): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort(), options.bind ?? '127.0.0.1');
    await redis.startProcess();
    return redis;
  }

  async startProcess(): Promise<void> {
    this.#process = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        ...new Set(['127.0.0.1', this.bind]),
        // Without a password, protected mode refuses every client but loopback's.
        ...(this.bind === '127.0.0.1' ? [] : ['--protected-mode', 'no']),
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--dir',
        this.#dir,
      ],
      { stdio: 'ignore' },
    );
    for (let i = 0; i < 50; i += 1) {
      try {
        execFileSync('redis-cli', ['-p', String(this.port), 'ping'], { stdio: 'ignore' });
        return;
      } catch {
        await sleep(100);
      }
    }
    throw new Error('private redis did not start');
  }

  async stop(): Promise<void> {
    const child = this.#process;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }

  async restart(downMs = 500): Promise<void> {
    await this.stop();
    await sleep(downMs);
    await this.startProcess();
  }

  async close(): Promise<void> {
    await this.stop();
    rmSync(this.#dir, { recursive: true, force: true });
  }
}

function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const version = readdirSync(root).sort().at(-1);
  return version ? path.join(root, version, 'bin') : undefined;
}

function asPostgres(args: string[]): string[] {
  // initdb refuses to run as root; the machine's postgres user runs the cluster.
  return process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', ...args] : args;
}

/** A Postgres cluster of the test's own (initdb into a temp dir), to restart mid-run. */
export class PrivatePostgres {
  readonly #dir: string;
  readonly #bin: string;
  readonly #fsync: boolean;
  /** Addresses it listens on besides 127.0.0.1 (see {@link PrivatePostgres.start}). */
  #listen: string[] = [];

  private constructor(
    readonly port: number,
    bin: string,
    fsync: boolean,
  ) {
    this.#bin = bin;
    this.#fsync = fsync;
    this.#dir = mkdtempSync(path.join(tmpdir(), 'hiresync-pg-'));
  }

  /** Its URL: at the address given to {@link PrivatePostgres.start} as `listen`, else 127.0.0.1. */
  get url(): string {
    return `postgres://postgres@${this.#listen[0] ?? '127.0.0.1'}:${this.port}/postgres`;
  }

  static available(): boolean {
    const bin = postgresBin();
    return bin !== undefined && existsSync(path.join(bin, 'initdb'));
  }

  /**
   * initdb and start. `fsync` (default false: a test's cluster need not
   * survive a crash of the machine) true leaves every setting at its default.
   */
  static async start({
    fsync = false,
    listen,
  }: {
    fsync?: boolean;
    /**
     * Another address to listen on (another host's reach), and the /24 around
     * it trusted as 127.0.0.1 is; `url` then names it.
     */
    listen?: string;
  } = {}): Promise<PrivatePostgres> {
    const pg = new PrivatePostgres(await freePort(), postgresBin() as string, fsync);
    if (listen !== undefined) pg.#listen = [listen];
    if (process.getuid?.() === 0) execFileSync('chown', ['postgres', pg.#dir]);
    const [cmd, ...args] = asPostgres([
      path.join(pg.#bin, 'initdb'),
      '-D',
      path.join(pg.#dir, 'data'),
      '-U',
      'postgres',
      '--auth=trust',
      '-N',
    ]);
    execFileSync(cmd as string, args, { stdio: 'ignore' });
    const subnet = pg.#listen.map((address) => `${address.replace(/\.\d+$/, '.0')}/24`);
    for (const trusted of subnet) {
      appendFileSync(path.join(pg.#dir, 'data', 'pg_hba.conf'), `host all all ${trusted} trust\n`);
    }
    pg.ctl('start', '-w');
    return pg;
  }

  ctl(...action: string[]): void {
    const listen = ['127.0.0.1', ...this.#listen].join(',');
    const options = `-p ${this.port} -k ${this.#dir} -c listen_addresses=${listen}${this.#fsync ? '' : ' -c fsync=off'}`;
    const [cmd, ...args] = asPostgres([
      path.join(this.#bin, 'pg_ctl'),
      '-D',
      path.join(this.#dir, 'data'),
      '-o',
      options,
      '-l',
      path.join(this.#dir, 'log'),
      ...action,
    ]);
    execFileSync(cmd as string, args, { stdio: 'ignore' });
  }

  restart(): void {
    this.ctl('restart', '-m', 'fast', '-w');
  }

  close(): void {
    try {
      this.ctl('stop', '-m', 'immediate', '-w');
    } finally {
      rmSync(this.#dir, { recursive: true, force: true });
    }
  }
}
