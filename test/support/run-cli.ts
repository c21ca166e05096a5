import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/src/cli.js', import.meta.url));

/**
 * The working directory of every CLI a test starts: an empty folder of its
 * own, so that no `.env` of the checkout (a developer's) reaches a test.
 */
export const CLI_CWD = mkdtempSync(join(tmpdir(), 'hiresync-cli-'));

/**
 * Where the base and auth URLs of a CLI point when the test leaves them out
 * (their default is the live service's): a closed loopback port, so that a
 * test that forgets its simulator fails at once and never reaches the
 * internet. A test that wants them unset passes them as undefined.
 */
export const UNREACHABLE_URL = 'http://127.0.0.1:9';

/** `env` with the base and auth URLs it leaves out pointing at {@link UNREACHABLE_URL}. */
export function offlineEnv(
  env: Record<string, string | undefined>,
): Record<string, string | undefined> {
  return {
    ...('HIRESYNC_BASE_URL' in env ? {} : { HIRESYNC_BASE_URL: UNREACHABLE_URL }),
    ...('HIRESYNC_AUTH_URL' in env ? {} : { HIRESYNC_AUTH_URL: UNREACHABLE_URL }),
    ...env,
  };
}

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

/** Where a CLI runs: another working directory, and `env` exactly (no URLs of {@link offlineEnv} added). */
export interface SpawnWhere {
  cwd?: string;
  exactEnv?: boolean;
}

/**
 * Starts the built CLI with the given environment (plus PATH, and the
 * URLs of {@link offlineEnv}) in {@link CLI_CWD}.
 */
export function spawnCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  where: SpawnWhere = {},
): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: where.cwd ?? CLI_CWD,
    env: { PATH: process.env.PATH, ...(where.exactEnv ? env : offlineEnv(env)) },
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

/** Runs the built CLI as {@link spawnCli} does, killed after `timeoutMs`. */
export async function runCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  timeoutMs = 60_000,
  where: SpawnWhere = {},
): Promise<CliResult> {
  const cli = spawnCli(args, env, where);
  const timer = setTimeout(() => cli.child.kill('SIGKILL'), timeoutMs);
  try {
    const code = await cli.exit;
    return { code, stdout: cli.stdout(), stderr: cli.stderr() };
  } finally {
    clearTimeout(timer);
  }
}
