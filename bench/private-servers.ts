import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './ports.js';

/** The certificate of a TLS-only {@link PrivateRedis} (PEM files). */
export interface PrivateRedisTls {
  certFile: string;
  keyFile: string;
  /** The CA that signed `certFile`: what redis-cli trusts to check it is up. */
  caFile: string;
}

/**
 * A Redis server of the test's own, with AOF persistence (as BullMQ wants in
 * production), so it can be restarted without touching the shared one. With
 * `tls`, it listens in TLS only (no plain port: `--port 0`), at a `rediss://`
 * URL, clients unauthenticated by certificate.
 */
export class PrivateRedis {
  readonly url: string;
  #process: ChildProcess | undefined;
  readonly #dir = mkdtempSync(path.join(tmpdir(), 'hiresync-redis-'));

  private constructor(
    readonly port: number,
    readonly bind: string,
    readonly tls?: PrivateRedisTls,
  ) {
    this.url = `${tls ? 'rediss' : 'redis'}://${bind}:${port}`;
  }

  static available(): boolean {
    try {
      execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  }

  /**
   * `bind`: the address it listens on besides 127.0.0.1, and its URL's
   * (another host's reach); `tls`: TLS only, at a `rediss://` URL.
   */
  static async start(
    options: { bind?: string; tls?: PrivateRedisTls } = {},
  ): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort(), options.bind ?? '127.0.0.1', options.tls);
    await redis.startProcess();
    return redis;
  }

  /** The port arguments of redis-server and redis-cli. */
  #portArgs(server: boolean): string[] {
    const { tls } = this;
    if (!tls) return server ? ['--port', String(this.port)] : ['-p', String(this.port)];
    return server
      ? [
          '--port',
          '0',
          '--tls-port',
          String(this.port),
          '--tls-cert-file',
          tls.certFile,
          '--tls-key-file',
          tls.keyFile,
          '--tls-ca-cert-file',
          tls.caFile,
          '--tls-auth-clients',
          'no',
        ]
      : ['-p', String(this.port), '--tls', '--cacert', tls.caFile];
  }

  /** The server's log: where it says, for one, a client that did not speak TLS to its TLS port. */
  log(): string {
    return readFileSync(path.join(this.#dir, 'redis.log'), 'utf8');
  }

  async startProcess(): Promise<void> {
    this.#process = spawn(
      'redis-server',
      [
        ...this.#portArgs(true),
        '--logfile',
        path.join(this.#dir, 'redis.log'),
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
        execFileSync('redis-cli', [...this.#portArgs(false), 'ping'], { stdio: 'ignore' });
        return;
      } catch {
        await sleep(100);
      }
    }
    let log = '';
    try {
      log = this.log().split('\n').slice(-5).join('\n');
    } catch {
      // No log: redis-server did not get as far as opening it.
    }
    throw new Error(`private redis did not start${log ? `:\n${log}` : ''}`);
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

  /** The cluster's data directory (postgresql.conf, pg_hba.conf): a test may write there, then {@link restart}. */
  get dataDir(): string {
    return path.join(this.#dir, 'data');
  }

  /** The server's log (`pg_ctl -l`). */
  get logFile(): string {
    return path.join(this.#dir, 'log');
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

  /**
   * A streaming standby of `primary` (pg_basebackup -R), started: read-only
   * until {@link promote}. Run `primary.synchronous()` for commits to wait
   * for it, so that a primary stopped at any moment has lost nothing a
   * client saw committed (as a managed service's synchronous standby).
   */
  static async standbyOf(primary: PrivatePostgres): Promise<PrivatePostgres> {
    const pg = new PrivatePostgres(await freePort(), primary.#bin, primary.#fsync);
    if (process.getuid?.() === 0) execFileSync('chown', ['postgres', pg.#dir]);
    const [cmd, ...args] = asPostgres([
      path.join(pg.#bin, 'pg_basebackup'),
      '-D',
      path.join(pg.#dir, 'data'),
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-R',
      '-X',
      'stream',
    ]);
    execFileSync(cmd as string, args, { stdio: 'ignore' });
    pg.ctl('start', '-w');
    return pg;
  }

  /** Commits on this primary wait until its standby has them (synchronous_standby_names '*'). */
  synchronous(): void {
    this.psql("alter system set synchronous_standby_names = '*'", 'select pg_reload_conf()');
  }

  /** Runs `statements` with psql over the cluster's socket directory. */
  psql(...statements: string[]): string {
    const [cmd, ...args] = asPostgres([
      path.join(this.#bin, 'psql'),
      '-h',
      this.#dir,
      '-p',
      String(this.port),
      '-U',
      'postgres',
      '-Atq',
      '-v',
      'ON_ERROR_STOP=1',
      ...statements.flatMap((s) => ['-c', s]),
    ]);
    return execFileSync(cmd as string, args, { encoding: 'utf8' }).trim();
  }

  /** A standby becomes a primary (pg_ctl promote, waiting until it accepts writes). */
  promote(): void {
    this.ctl('promote', '-w');
  }

  /** Stops the server: `fast` (a clean shutdown) or `immediate` (as a crash). */
  stop(mode: 'fast' | 'immediate'): void {
    this.ctl('stop', '-m', mode, '-w');
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

  #running(): boolean {
    return existsSync(path.join(this.#dir, 'data', 'postmaster.pid'));
  }

  restart(): void {
    this.ctl('restart', '-m', 'fast', '-w');
  }

  close(): void {
    try {
      if (this.#running()) this.stop('immediate');
    } finally {
      rmSync(this.#dir, { recursive: true, force: true });
    }
  }
}
