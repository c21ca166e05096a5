import { connect, createServer } from 'node:net';

/** True when something accepts a TCP connection on `host:port` within `timeoutMs`. */
export function answersOn(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (answered: boolean) => {
      socket.destroy();
      resolve(answered);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** True when a Redis server on `host:port` answers PING with PONG within `timeoutMs`. */
export function redisAnswers(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let answer = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString();
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
    });
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
  });
}

/**
 * A loopback port nothing listens on now: the system's choice for a port 0
 * listener, closed at once. Another process could take it before the server
 * binds it; the callers retry once when the bind fails.
 */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
