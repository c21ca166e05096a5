import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, runCli } from '../support/run-cli.js';

const ROOT = resolve(dirname(CLI), '../..');
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
};

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

  it("prints package.json's version on --version and -V", async () => {
    for (const flag of ['--version', '-V']) {
      expect(await runCli([flag])).toEqual({
        code: 0,
        stdout: `hiresync ${version}\n`,
        stderr: '',
      });
    }
  });

  it('npx hiresync hands -h, --help and --version to hiresync, as the README writes them; npm exec needs -- first', async () => {
    const run = (command: string, args: string[]) =>
      new Promise<string>((done, reject) => {
        const child = spawn(command, args, {
          cwd: ROOT,
          env: { PATH: process.env.PATH, HOME: process.env.HOME },
          stdio: ['ignore', 'pipe', 'ignore'],
        });
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
        });
        child.on('error', reject);
        child.on('close', () => done(out));
      });
    expect(await run('npx', ['hiresync', '--version'])).toBe(`hiresync ${version}\n`);
    for (const flag of ['-h', '--help']) {
      expect(await run('npx', ['hiresync', flag])).toMatch(/^usage: hiresync <command>/);
    }
    expect(await run('npm', ['exec', 'hiresync', '--', '--version'])).toBe(`hiresync ${version}\n`);
    // Without `--`, npm exec reads the flag as its own and prints npm's version.
    expect(await run('npm', ['exec', 'hiresync', '--version'])).not.toContain('hiresync');
  });

  it('reads the version relative to itself where the Docker image puts it (/app/package.json, /app/dist/src)', async () => {
    const app = mkdtempSync(join(tmpdir(), 'hiresync-image-'));
    try {
      cpSync(join(ROOT, 'package.json'), join(app, 'package.json'));
      cpSync(join(ROOT, 'dist/src'), join(app, 'dist/src'), { recursive: true });
      symlinkSync(join(ROOT, 'node_modules'), join(app, 'node_modules'));
      const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>(
        (done, reject) => {
          // Started from elsewhere: the working directory must not matter.
          const child = spawn(process.execPath, [join(app, 'dist/src/cli.js'), '--version'], {
            cwd: tmpdir(),
            env: { PATH: process.env.PATH },
            stdio: ['ignore', 'pipe', 'inherit'],
          });
          let out = '';
          child.stdout.on('data', (d: Buffer) => {
            out += d.toString();
          });
          child.on('error', reject);
          child.on('close', (c) => done({ code: c, stdout: out }));
        },
      );
      expect({ code, stdout }).toEqual({ code: 0, stdout: `hiresync ${version}\n` });
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });

  it('takes -h for --help at the top, for a command and for an accounts subcommand', async () => {
    for (const args of [[], ['status'], ['accounts', 'list']]) {
      const long = await runCli([...args, '--help']);
      const short = await runCli([...args, '-h']);
      expect(short, args.join(' ')).toEqual(long);
      expect(short.code).toBe(0);
      expect(short.stdout).toMatch(/-h, --help/);
    }
  });
});
