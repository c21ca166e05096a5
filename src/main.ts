import { type CommandIo, EXIT, processIo } from './commands/command.js';
import { formatTermList } from './commands/help-text.js';
import { COMMANDS } from './commands/index.js';
import { shareTerminal } from './commands/terminal.js';
import type { Env } from './config/types.js';
import { ConfigError, coerceError, UsageError } from './errors.js';
import { redactSecrets } from './secret.js';
import { readVersion } from './version.js';

/** `hiresync --help`: the commands with their summaries. */
export function formatUsage(): string {
  return [
    'usage: hiresync <command> [options]',
    '',
    'commands:',
    formatTermList(COMMANDS.map((c) => [c.name, c.summary] as const)),
    '',
    'options:',
    formatTermList([
      ['-h, --help', 'print this help'],
      ['-V, --version', "print hiresync's version"],
    ]),
    '',
    "Run 'hiresync <command> --help' for a command's options.",
  ].join('\n');
}

/**
 * Runs the command named by `argv[0]` with the rest of `argv`; resolves to
 * its exit code: 0 ok, 1 failed, 2 usage or configuration error (one line on
 * stderr). Never throws. `env` is the environment (see `readEnv` in config/env.ts);
 * `io` defaults to the process's stdout, stderr and signals; on a terminal,
 * the command writes both through one {@link shareTerminal}.
 */
export async function main(
  argv: readonly string[],
  env: Env,
  io: CommandIo = processIo(),
): Promise<number> {
  const [name, ...args] = argv;
  // On a terminal, the command's output, its errors and its log lines share sync's progress line.
  const shared = shareTerminal(io);
  try {
    if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
      shared.stdout.write(`${formatUsage()}\n`);
      return name === undefined ? EXIT.usage : EXIT.ok;
    }
    if (name === '--version' || name === '-V') {
      shared.stdout.write(`hiresync ${readVersion()}\n`);
      return EXIT.ok;
    }
    const entry = COMMANDS.find((c) => c.name === name);
    if (!entry)
      throw new UsageError(`unknown command ${JSON.stringify(name)}; run 'hiresync --help'`);
    const command = await entry.load();
    return await command.run(args, { env, ...shared });
  } catch (error) {
    if (error instanceof ConfigError) {
      shared.stderr.write(`hiresync: ${redactSecrets(error.message)}\n`);
      return EXIT.usage;
    }
    const e = coerceError(error);
    // parseArgs throws TypeErrors with codes like ERR_PARSE_ARGS_UNKNOWN_OPTION.
    if (
      error instanceof UsageError ||
      (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      shared.stderr.write(`hiresync: ${redactSecrets(e.message)}\n`);
      return EXIT.usage;
    }
    shared.stderr.write(`hiresync: ${redactSecrets(e.message)}\n`);
    return EXIT.failed;
  }
}
