import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** Where a {@link TcpProxy} sends new connections. */
export interface Backend {
  host: string;
  port: number;
}

/** Options of {@link TcpProxy.start}. */
export interface TcpProxyOptions {
  /** Where connections go at first; undefined: down until {@link TcpProxy.switchTo}. */
  backend?: Backend;
  /** The address it listens on. Default 127.0.0.1. */
  host?: string;
  /** The port it listens on. Default 0: a free one. */
  port?: number;
}

/**
 * A TCP proxy of the test's own, standing for a managed service's DNS name:
 * {@link switchTo} moves it to another backend, cutting every open
 * connection (as a failover does: the old server is gone), so only new
 * connections reach the new backend; {@link down} cuts them too and resets
 * every new one until the next switch (the service is unreachable).
 */
export class TcpProxy {
  readonly #server: Server;
  readonly #open = new Set<Socket>();
  #backend: Backend | undefined;
  /** Connections accepted, passed on to a backend or reset. */
  accepted = 0;
  /** Connections reset because the proxy was down. */
  refused = 0;

  private constructor(
    server: Server,
    readonly host: string,
    readonly port: number,
    backend: Backend | undefined,
  ) {
    this.#server = server;
    this.#backend = backend;
    server.on('connection', (client) => this.#accept(client));
  }

  static async start(options: TcpProxyOptions = {}): Promise<TcpProxy> {
    const host = options.host ?? '127.0.0.1';
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no port');
    return new TcpProxy(server, host, address.port, options.backend);
  }

  /** Where new connections go now (undefined while down). */
  get backend(): Backend | undefined {
    return this.#backend;
  }

  /** Connections open through the proxy now. */
  get openConnections(): number {
    return this.#open.size / 2;
  }

  /** New connections go to `backend`; every open one is cut. */
  switchTo(backend: Backend): void {
    this.#backend = backend;
    this.#cutAll();
  }

  /** Every open connection is cut and every new one reset, until {@link switchTo}. */
  down(): void {
    this.#backend = undefined;
    this.#cutAll();
  }

  async close(): Promise<void> {
    this.#cutAll();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #cutAll(): void {
    for (const socket of this.#open) socket.destroy();
    this.#open.clear();
  }

  #accept(client: Socket): void {
    this.accepted += 1;
    const backend = this.#backend;
    if (backend === undefined) {
      this.refused += 1;
      client.on('error', () => {});
      client.resetAndDestroy();
      return;
    }
    const upstream = createConnection(backend);
    const pair = [client, upstream];
    for (const socket of pair) {
      this.#open.add(socket);
      socket.on('error', () => {});
      // Either side closing closes the other: the connection is one.
      socket.on('close', () => {
        for (const other of pair) {
          this.#open.delete(other);
          other.destroy();
        }
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
