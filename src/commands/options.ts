import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { formatTermList, HELP_WIDTH, wrapText } from './help-text.js';

/** One command-line option of a command: what parses it and what its help says. */
export type OptionSpec =
  | {
      readonly type: 'boolean';
      /** One letter that also sets it (`v` for `-v`). */
      readonly short?: string;
      /** One phrase, lower case: what the flag does. */
      readonly description: string;
    }
  | {
      readonly type: 'string';
      /** One letter that also takes the value (`a` for `-a NAME`). */
      readonly short?: string;
      /** Placeholder of the value in help, e.g. `NAME` in `--resource NAME`. */
      readonly value: string;
      /** The option may be given more than once; its value is then an array. */
      readonly multiple?: boolean;
      /** One phrase, lower case: what the value means. */
      readonly description: string;
      /** The value when the option is absent; shown in help as `(default …)`. */
      readonly default?: string;
    };

/** A command's options by name (without the leading `--`), in the order help lists them. */
export type OptionTable = Readonly<Record<string, OptionSpec>>;

type ValueOf<S extends OptionSpec> = S extends { type: 'boolean' }
  ? boolean | undefined
  : S extends { multiple: true }
    ? string[] | undefined
    : S extends { default: string }
      ? string
      : string | undefined;

/** What {@link parseOptions} returns for a table: one value per option, plus `help`. */
export type OptionValues<T extends OptionTable> = { -readonly [K in keyof T]: ValueOf<T[K]> } & {
  help?: boolean | undefined;
};

/** What help says about a command besides its options. */
export interface CommandHelp {
  /** The command's name, as typed after `hiresync`. */
  readonly name: string;
  /** Its operands as the synopsis shows them, before the options (e.g. `NAME`); none by default. */
  readonly operands?: string;
  /** What the command does, how it exits and what it needs; wrapped when shown. */
  readonly description: string;
  readonly options: OptionTable;
}

const HELP_OPTION = { type: 'boolean', short: 'h', description: 'print this help' } as const;

/** The node:util `parseArgs` configuration of a table, `--help` and `-h` included. */
function argsConfig(table: OptionTable): ParseArgsOptionsConfig {
  const options: ParseArgsOptionsConfig = {
    help: { type: HELP_OPTION.type, short: HELP_OPTION.short },
  };
  for (const [name, spec] of Object.entries(table)) {
    const short = spec.short === undefined ? {} : { short: spec.short };
    options[name] =
      spec.type === 'boolean'
        ? { type: 'boolean', ...short }
        : spec.multiple
          ? {
              type: 'string',
              multiple: true,
              ...short,
              ...(spec.default === undefined ? {} : { default: [spec.default] }),
            }
          : {
              type: 'string',
              ...short,
              ...(spec.default === undefined ? {} : { default: spec.default }),
            };
  }
  return options;
}

/**
 * Parses a command's arguments with node:util `parseArgs` (strict: an unknown
 * option or a positional argument throws a TypeError whose code starts with
 * `ERR_PARSE_ARGS`). Every command also takes `--help` (`-h`).
 */
export function parseOptions<T extends OptionTable>(
  table: T,
  args: readonly string[],
): OptionValues<T> {
  const { values } = parseArgs({
    args: [...args],
    options: argsConfig(table),
    strict: true,
    allowPositionals: false,
  });
  return values as OptionValues<T>;
}

/**
 * Like {@link parseOptions}, for a command that also takes operands (the
 * `NAME` of `accounts disable NAME`), anywhere among its options. Their number
 * is for the command to check (after `--help`, which needs none).
 */
export function parseOptionsAndOperands<T extends OptionTable>(
  table: T,
  args: readonly string[],
): { values: OptionValues<T>; operands: string[] } {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: argsConfig(table),
    strict: true,
    allowPositionals: true,
  });
  return { values: values as OptionValues<T>, operands: positionals };
}

/** `--name VALUE`, as the synopsis shows an option. */
function flag(name: string, spec: OptionSpec): string {
  return spec.type === 'string' ? `--${name} ${spec.value}` : `--${name}`;
}

/** `-v, --verbose` or `--name VALUE`, as the list of options in help shows one. */
function flags(name: string, spec: OptionSpec): string {
  return spec.short === undefined ? flag(name, spec) : `-${spec.short}, ${flag(name, spec)}`;
}

/** The first line of help: `usage: hiresync NAME [OPERANDS] [--flag] [--option VALUE]...`, wrapped. */
export function formatSynopsis(command: CommandHelp): string {
  const head = `usage: hiresync ${command.name}${command.operands ? ` ${command.operands}` : ''}`;
  const items = Object.entries(command.options).map(
    ([name, spec]) =>
      `[${flag(name, spec)}]${spec.type === 'string' && spec.multiple ? '...' : ''}`,
  );
  // Wrap between items, never inside one.
  const lines = [head];
  for (const item of items) {
    const last = lines[lines.length - 1] ?? '';
    if (last.length + 1 + item.length > HELP_WIDTH && last.trim() !== '') {
      lines.push(`${' '.repeat(head.length)} ${item}`);
    } else {
      lines[lines.length - 1] = `${last} ${item}`;
    }
  }
  return lines.join('\n');
}

/**
 * A command's help, generated from its option table: synopsis, description,
 * then every option with its placeholder, description and default.
 */
export function formatHelp(command: CommandHelp): string {
  const rows = [...Object.entries(command.options), ['help', HELP_OPTION] as const].map(
    ([name, spec]) =>
      [
        flags(name, spec),
        spec.type === 'string' && spec.default !== undefined
          ? `${spec.description} (default ${spec.default})`
          : spec.description,
      ] as const,
  );
  return [
    formatSynopsis(command),
    '',
    ...command.description.split(/\n\s*\n/).flatMap((p) => [wrapText(p, HELP_WIDTH), '']),
    'options:',
    formatTermList(rows),
  ].join('\n');
}
