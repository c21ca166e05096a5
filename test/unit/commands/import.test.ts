import net from 'node:net';
import { describe, expect, it, vi } from 'vitest';

/** Handles a module could leave behind on import (sockets, servers, lookups, timers), by kind. */
function liveHandles(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) {
    if (/^(TCP|UDP|GetAddrInfo|Timeout|Immediate)/.test(kind))
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return counts;
}

/** Kinds of handle more numerous in `after` than in `before` (the runner's own may end meanwhile). */
function gained(before: Map<string, number>, after: Map<string, number>): string[] {
  return [...after].filter(([kind, n]) => n > (before.get(kind) ?? 0)).map(([kind]) => kind);
}

describe('command modules', () => {
  it('run nothing on import: no output, connection, handle, signal handler or exit code', async () => {
    vi.resetModules();
    const write = vi.spyOn(process.stdout, 'write');
    const writeErr = vi.spyOn(process.stderr, 'write');
    const connect = vi.spyOn(net.Socket.prototype, 'connect');
    const listeners = () =>
      ['SIGINT', 'SIGTERM', 'beforeExit', 'exit'].map((e) => process.listenerCount(e));
    const before = { listeners: listeners(), handles: liveHandles() };
    try {
      const modules = await Promise.all([
        import('../../../src/main.js'),
        import('../../../src/commands/index.js'),
        import('../../../src/commands/migrate.js'),
        import('../../../src/commands/sync.js'),
        import('../../../src/commands/worker.js'),
        import('../../../src/commands/status.js'),
        import('../../../src/commands/simulate.js'),
        import('../../../src/commands/demo.js'),
      ]);
      expect(modules).toHaveLength(8);
      expect(write).not.toHaveBeenCalled();
      expect(writeErr).not.toHaveBeenCalled();
      expect(connect).not.toHaveBeenCalled();
      expect(listeners()).toEqual(before.listeners);
      expect(gained(before.handles, liveHandles())).toEqual([]);
      expect(process.exitCode).toBeUndefined();
    } finally {
      write.mockRestore();
      writeErr.mockRestore();
      connect.mockRestore();
    }
  });
});
