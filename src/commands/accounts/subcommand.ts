import { registeredAccountProblem } from '../../account-name.js';
import { ConfigError, coerceError, UsageError } from '../../errors.js';
import { redactSecrets } from '../../secret.js';
import { type CommandContext, EXIT } from '../command.js';
import {
  formatHelp,
  type OptionTable,
  type OptionValues,
  parseOptionsAndOperands,
} from '../options.js';

/** A subcommand's operands as help shows them: one word per operand. */
export type Operand = 'NAME' | 'NAME ROLE' | '';

/**
 * An `accounts` subcommand as the table of `hiresync accounts` lists it: its
 * name, operand and summary for `hiresync accounts --help`, and its module,
 * imported only when it runs (or prints its own help).
 */
export interface SubcommandEntry {
  /** As typed after `hiresync accounts`; the loaded subcommand's `name`. */
  readonly name: string;
  /** Its operands in help (`NAME`, `NAME ROLE`), or empty; the loaded subcommand's `operand`. */
  readonly operand: Operand;
  readonly summary: string;
  /** Imports the subcommand's module. */
  load(): Promise<Subcommand>;
}

/** An `accounts` subcommand, as the dispatcher and help see it. */
export interface Subcommand {
  /** As typed after `hiresync accounts`. */
  readonly name: string;
  /** Its operands in help (`NAME`, `NAME ROLE`), or empty. */
  readonly operand: Operand;
  readonly description: string;
  readonly options: OptionTable;
  /**
   * Parses `args`, prints the help on `--help`, else runs the subcommand.
   * Resolves to the exit code: usage and configuration errors are thrown
   * (exit 2); any other failure is printed, prefixed with the subcommand, and
   * resolves to 1.
   */
  run(args: readonly string[], context: CommandContext): Promise<number>;
}

/** A subcommand as written: its help, its options, and what it does with them and its operand. */
export interface SubcommandDefinition<T extends OptionTable> {
  readonly name: string;
  /** `NAME` for a subcommand of one account (`NAME ROLE`: and a role), empty for one of none. */
  readonly operand: Operand;
  readonly description: string;
  readonly options: T;
  /** `name` is the first operand (empty when the subcommand takes none); `rest` the others. */
  execute(
    values: OptionValues<T>,
    name: string,
    context: CommandContext,
    rest: readonly string[],
  ): Promise<number>;
}

/** Builds a {@link Subcommand} of `hiresync accounts`. */
export function defineSubcommand<T extends OptionTable>(
  definition: SubcommandDefinition<T>,
): Subcommand {
  const { name, operand, description, options } = definition;
  const full = `accounts ${name}`;
  return Object.freeze({
    name,
    operand,
    description,
    options,
    async run(args: readonly string[], context: CommandContext): Promise<number> {
      const { values, operands } = parseOptionsAndOperands(options, args);
      if (values.help) {
        context.stdout.write(
          `${formatHelp({ name: full, operands: operand, description, options })}\n`,
        );
        return EXIT.ok;
      }
      const wanted = operand === '' ? 0 : operand.split(' ').length;
      if (operands.length !== wanted) {
        throw new UsageError(
          wanted === 0
            ? `hiresync ${full} takes no argument, got ${JSON.stringify(operands[0])}`
            : wanted > 1
              ? `hiresync ${full} takes ${operand}, got ${operands.length} argument(s): hiresync ${full} ${operand}`
              : operands.length === 0
                ? `hiresync ${full} needs the account's NAME: hiresync ${full} NAME`
                : `hiresync ${full} takes one account NAME, got ${operands.length}`,
        );
      }
      try {
        return await definition.execute(values, operands[0] ?? '', context, operands.slice(1));
      } catch (error) {
        if (error instanceof UsageError || error instanceof ConfigError) throw error;
        context.stderr.write(`hiresync ${full}: ${redactSecrets(coerceError(error).message)}\n`);
        return EXIT.failed;
      }
    },
  });
}

/**
 * Throws a UsageError (exit 2) unless `name` can name a registered account;
 * `default`, the environment's account, gets its own explanation: its
 * credentials are the environment's, not a row that `action` could change.
 */
export function checkAccountName(name: string, action: string): void {
  const problem = registeredAccountProblem(name, action);
  if (problem) throw new UsageError(problem);
}
