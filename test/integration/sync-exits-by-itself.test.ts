import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { harness } = cleanupAfterEach();

const DIST = fileURLToPath(new URL('../../dist/src/', import.meta.url));

/**
 * Runs the built `main` of `hiresync sync` in a child process without the
 * bin's fallback exit. Reports the timers that still hold the process on the
 * turn after the command returned (connections may still be closing then),
 * and whether its event loop then drained by itself ('beforeExit').
 */
function syncWithoutFallbackExit(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; timers: string[]; drained: boolean }> {
  const script = `
    import { main } from ${JSON.stringify(`${DIST}main.js`)};
    import { readEnv } from ${JSON.stringify(`${DIST}config/env.js`)};
    const code = await main(['sync'], readEnv());
    process.exitCode = code;
    setImmediate(() => {
      const timers = process.getActiveResourcesInfo().filter((r) => r === 'Timeout');
      process.stderr.write('\\ntimers: ' + JSON.stringify(timers) + '\\n');
    });
    process.once('beforeExit', () => process.stderr.write('\\ndrained\\n'));
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const line = /^timers: (.*)$/m.exec(stderr)?.[1];
      if (line === undefined) reject(new Error(`no timers line; stderr: ${stderr.slice(-2000)}`));
      else
        resolve({
          code,
          stdout,
          timers: JSON.parse(line) as string[],
          drained: /^drained$/m.test(stderr),
        });
    });
  });
}

describe('hiresync sync', () => {
  it('leaves no timer behind once it has printed its summary, and its process ends by itself', async () => {
    const h = await harness({ simulator: { dataset: { counts: { jobs: 30 } } } });
    for (const run of ['first (full)', 'second (incremental)']) {
      const result = await syncWithoutFallbackExit({ ...h.env, HIRESYNC_RESOURCES: 'jobs' });
      expect(result.code, run).toBe(0);
      expect(result.stdout, run).toMatch(/^jobs\s+(full|incremental)\s/m);
      // Nothing left to wait for: no sleep or timer, and the loop empties by itself.
      expect(result.timers, run).toEqual([]);
      expect(result.drained, run).toBe(true);
    }
  });
});
