import { EventEmitter } from 'node:events';
import { expect } from 'vitest';
import type { CommandContext } from '../../src/commands/command.js';
import { simulate } from '../../src/commands/simulate.js';

/**
 * Runs `hiresync simulate --port 0 --records 3 ARGS…` in process until it has
 * printed its addresses; `stop()` sends SIGTERM and expects exit 0.
 */
export async function runSimulate(
  args: string[],
): Promise<{ out: string; stop: () => Promise<void> }> {
  let out = '';
  let printed: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    printed = resolve;
  });
  const signals = new EventEmitter();
  const context: CommandContext = {
    env: {},
    stdout: {
      write: (text: string) => {
        out += text;
        if (out.includes('Stop with Ctrl-C')) printed();
      },
    },
    stderr: { write: () => undefined },
    signals,
  };
  const run = simulate.run(['--port', '0', '--records', '3', ...args], context);
  await ready;
  return {
    out,
    stop: async () => {
      signals.emit('SIGTERM');
      expect(await run).toBe(0);
    },
  };
}
