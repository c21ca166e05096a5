import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { probeServices, provideServices } from '../../../src/local-services/provide-services.js';
import { DEMO_CHAIN, planServices } from '../../../src/local-services/service-plan.js';
import { main } from '../../../src/main.js';
import { captureIo } from '../../support/capture-io.js';

vi.mock('../../../src/local-services/provide-services.js', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../../src/local-services/provide-services.js')>()),
  probeServices: vi.fn(),
  provideServices: vi.fn(),
}));

let connect: ReturnType<typeof vi.spyOn>;
beforeEach(() => {
  connect = vi.spyOn(net.Socket.prototype, 'connect');
});
afterEach(() => {
  vi.mocked(probeServices).mockReset();
  connect.mockRestore();
});

describe('npm run demo exits 2 before starting anything', () => {
  it('without Redis: names REDIS_URL and the install lines, having started and connected to nothing', async () => {
    // As probed on a fresh machine with no redis-server and no Docker engine.
    const probes = {
      localPostgres: false,
      localRedis: false,
      dockerEngine: false,
      embeddedPostgres: true as const,
      redisServer: undefined,
    };
    vi.mocked(probeServices).mockResolvedValue({
      probes,
      plan: planServices(probes, DEMO_CHAIN),
      binaries: undefined,
    });
    const io = captureIo();
    const code = await main(['demo'], {}, io);
    expect(code).toBe(2);
    expect(io.out()).toBe('');
    expect(io.err()).toBe(
      'hiresync: invalid configuration: REDIS_URL: not set, nothing answers on 127.0.0.1:6379, and there is no redis-server on PATH to start a private one, nor a Docker engine to run one in a container: install Redis (Debian/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis), or run the whole stack with `docker compose up` (README, With Docker), or set REDIS_URL\n',
    );
    expect(probeServices).toHaveBeenCalledWith(DEMO_CHAIN, {
      givenPostgres: undefined,
      givenRedis: undefined,
    });
    expect(provideServices, 'neither Postgres nor Redis was started').not.toHaveBeenCalled();
    expect(connect, 'no connection was attempted').not.toHaveBeenCalled();
  });

  it('refuses a --database that is not a plain name with exit 2, before looking for any service', async () => {
    const io = captureIo();
    expect(await main(['demo', '--database', 'x; drop database postgres'], {}, io)).toBe(2);
    expect(io.err()).toBe(
      'hiresync: --database "x; drop database postgres": a database name of lower-case letters, digits and underscores\n',
    );
    expect(probeServices).not.toHaveBeenCalled();
    expect(connect).not.toHaveBeenCalled();
  });
});
