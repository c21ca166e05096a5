import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/src/cli.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A built CLI running in a child process. */
export interface CliProcess {
  child: ChildProcessByStdio<null, Readable, Readable>;
  /** Resolves to its exit code (null when a signal ended it) once it has exited and its output is read. */
  exit: Promise<number | null>;
  /** What it has written so far. */
  stdout: () => string;
  stderr: () => string;
  /** Kills it (SIGKILL) unless it has ended, and waits for its exit. */
  kill: () => Promise<void>;
}

/** Starts the built CLI with exactly the given environment (plus PATH). */
export function spawnCli(args: string[], env: Record<string, string | undefined> = {}): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], {
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
  // 'close', not 'exit': its output is then all read.
  const exit = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
  return {
    child,
    exit,
    stdout: () => stdout,
    stderr: () => stderr,
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exit;
    },
  };
}

/** Runs the built CLI with exactly the given environment (plus PATH), killed after `timeoutMs`. */
export async function runCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  timeoutMs = 60_000,
): Promise<CliResult> {
  const cli = spawnCli(args, env);
  const timer = setTimeout(() => cli.child.kill('SIGKILL'), timeoutMs);
  try {
    const code = await cli.exit;
    return { code, stdout: cli.stdout(), stderr: cli.stderr() };
  } finally {
    clearTimeout(timer);
  }
}
