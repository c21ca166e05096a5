import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI } from '../support/run-cli.js';

// `npm run build` (run by `pretest`) makes dist/src/cli.js, the package's bin.
describe('the built bin', () => {
  it('is executable after a build and runs by itself, as npx and node_modules/.bin run it', async () => {
    expect(statSync(CLI).mode & 0o777).toBe(0o755);
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>(
      (resolve, reject) => {
        // Spawned as a program, not through `node`: the shebang and the run bit do the work.
        const child = spawn(CLI, ['--help'], {
          env: { PATH: process.env.PATH },
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
        });
        child.on('error', reject);
        child.on('close', (c) => resolve({ code: c, stdout: out }));
      },
    );
    expect(code).toBe(0);
    expect(stdout).toMatch(/hiresync/);
    expect(stdout).toMatch(/\bsync\b/);
  });
});
