import type { Env } from '../config/types.js';
import { formatHelp, type OptionTable, type OptionValues, parseOptions } from './options.js';

/** Exit codes of every command. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** Where a command writes for humans: process.stdout or process.stderr, or a test's buffer. */
export interface Output {
  write(text: string): unknown;
  /** True on a terminal: `sync` then shows live progress, and logs are pretty. */
  readonly isTTY?: boolean;
  /** A terminal's width in characters. */
  readonly columns?: number;
}

/**
 * The one progress line a command's standard output and standard error share
 * on a terminal (commands/terminal.ts): every other write through them clears
 * it first and draws it again after.
 */
export interface ProgressLine {
  /** True when the progress line is drawn: standard output is a terminal. */
  readonly interactive: boolean;
  /** Draws `line` in place of the progress line showing. */
  progress(line: string): void;
  /** Erases the progress line for good. */
  endProgress(): void;
}

/** Where a long-running command learns it should stop: the process, or a test's emitter. */
export interface Signals {
  once(signal: 'SIGINT' | 'SIGTERM', listener: () => void): unknown;
}

/**
 * Where a command reads what must not be an argument (a secret, shown by
 * `ps`), or an answer to a question: process.stdin, or a test's stream.
 * `isTTY` is true on a terminal, where a person can answer.
 */
export type Input = AsyncIterable<string | Buffer> & { readonly isTTY?: boolean };

/** A command's input and output besides its arguments. */
export interface CommandIo {
  /** Standard input: `accounts add` reads the credential from it. Absent: an empty input. */
  stdin?: Input;
  stdout: Output;
  stderr: Output;
  signals: Signals;
  /** Set when `stdout` and `stderr` are written through one terminal with a progress line (main does so). */
  terminal?: ProgressLine;
}

/** Everything a command gets besides its arguments: the environment, read once, and its I/O. */
export interface CommandContext extends CommandIo {
  env: Env;
}

/** The I/O of the running process. */
export function processIo(): CommandIo {
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    signals: process,
  };
}

/**
 * A command as the command table (commands/index.ts) lists it: its name and
 * the phrase `hiresync --help` shows, and its module, imported only when the
 * command runs (or prints its own help), so that a command loads the packages
 * it uses and no other command's (`--version` and `--help` load none).
 */
export interface CommandEntry {
  /** As typed after `hiresync`; the loaded command's `name`. */
  readonly name: string;
  /** One phrase for the command list of `hiresync --help`. */
  readonly summary: string;
  /** Imports the command's module. */
  load(): Promise<Command>;
}

/** A hiresync command, as the dispatcher and help see it. */
export interface Command {
  /** As typed after `hiresync`. */
  readonly name: string;
  /** The body of the command's `--help`. */
  readonly description: string;
  readonly options: OptionTable;
  /**
   * Parses `args` against the option table; prints the help on `--help`;
   * otherwise runs the command. Resolves to the exit code; throws a
   * ConfigError or UsageError (exit 2) or any other error (exit 1).
   */
  run(args: readonly string[], context: CommandContext): Promise<number>;
}

/** A command as written in src/commands: its help, its options and what it does with their values. */
export interface CommandDefinition<T extends OptionTable> {
  readonly name: string;
  readonly description: string;
  readonly options: T;
  execute(values: OptionValues<T>, context: CommandContext): Promise<number>;
}

/** Builds a {@link Command}: its `run` parses the options, answers `--help` and calls `execute`. */
export function defineCommand<T extends OptionTable>(definition: CommandDefinition<T>): Command {
  const { name, description, options } = definition;
  const help = { name, description, options };
  return Object.freeze({
    name,
    description,
    options,
    async run(args: readonly string[], context: CommandContext): Promise<number> {
      const values = parseOptions(options, args);
      if (values.help) {
        context.stdout.write(`${formatHelp(help)}\n`);
        return EXIT.ok;
      }
      return definition.execute(values, context);
    },
  });
}
