import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type Backend, TcpProxy } from '../../support/tcp-proxy.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A server that answers each line with its name and the line. */
async function namedEcho(name: string): Promise<Backend> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('data', (data) => socket.write(`${name}:${data}`));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { host: '127.0.0.1', port: address.port };
}

async function proxy(backend?: Backend): Promise<TcpProxy> {
  const started = await TcpProxy.start({ backend });
  closers.push(() => started.close());
  return started;
}

/** A connection to the proxy; what it receives, and whether it has closed. */
async function connect(p: TcpProxy) {
  const socket = createConnection({ host: p.host, port: p.port });
  socket.on('error', () => {});
  closers.push(async () => {
    socket.destroy();
  });
  let received = '';
  socket.on('data', (data) => {
    received += String(data);
  });
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  // A reset connection may close before it is reported connected.
  await Promise.race([new Promise((resolve) => socket.once('connect', resolve)), closed]);
  return {
    ask: async (line: string) => {
      const before = received.length;
      socket.write(line);
      await new Promise<void>((resolve) => socket.once('data', () => resolve()));
      return received.slice(before);
    },
    closed,
  };
}

describe('the test TCP proxy', () => {
  it('passes bytes to its backend, and after a switch cuts the open connection and sends new ones to the new backend', async () => {
    const p = await proxy(await namedEcho('primary'));
    const first = await connect(p);
    expect(await first.ask('a')).toBe('primary:a');
    p.switchTo(await namedEcho('standby'));
    await first.closed;
    const second = await connect(p);
    expect(await second.ask('b')).toBe('standby:b');
    expect(p.accepted).toBe(2);
  });

  it('resets every connection while down, and serves again after the next switch', async () => {
    const backend = await namedEcho('primary');
    const p = await proxy(backend);
    const open = await connect(p);
    p.down();
    await open.closed;
    const refused = await connect(p);
    await refused.closed;
    expect(p.refused).toBe(1);
    p.switchTo(backend);
    expect(await (await connect(p)).ask('c')).toBe('primary:c');
  });
});
