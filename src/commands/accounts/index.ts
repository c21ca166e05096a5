import { UsageError } from '../../errors.js';
import { type Command, EXIT } from '../command.js';
import { formatTermList, HELP_WIDTH, wrapText } from '../help-text.js';
import { formatSynopsis, type OptionTable } from '../options.js';
import { add } from './add.js';
import { authorize } from './authorize.js';
import { invite } from './invite.js';
import { list } from './list.js';
import { rekey } from './rekey.js';
import { remove } from './remove.js';
import { disable, enable } from './state.js';
import type { Subcommand } from './subcommand.js';
import { update } from './update.js';

/** The subcommands of `hiresync accounts`, in the order help lists them. */
export const SUBCOMMANDS: readonly Subcommand[] = [
  add,
  update,
  authorize,
  invite,
  list,
  disable,
  enable,
  remove,
  rekey,
];

/** `hiresync accounts` itself takes no option but `--help`; its subcommands have their own. */
export const options = {} as const satisfies OptionTable;

const name = 'accounts';
const summary =
  'register, update, authorize, invite, list, disable, enable and remove accounts (customers)';
const description = `Manages the accounts hiresync syncs besides default, the environment's own
  credentials (schema public): each registered account has its credentials sealed in
  hiresync.accounts and its tables in the schema of its name. The first argument picks
  the subcommand. Exit codes: 0 ok, 1 failed (an unknown account, Postgres or Redis
  failing), 2 usage or configuration error.`;

/** `hiresync accounts --help`: synopsis, description, subcommands, options. */
function formatAccountsHelp(): string {
  return [
    formatSynopsis({ name, operands: 'SUBCOMMAND [NAME]', description, options }),
    '',
    wrapText(description, HELP_WIDTH),
    '',
    'subcommands:',
    formatTermList(
      SUBCOMMANDS.map((s) => [s.operand ? `${s.name} ${s.operand}` : s.name, s.summary] as const),
    ),
    '',
    'options:',
    formatTermList([['-h, --help', 'print this help']]),
    '',
    "Run 'hiresync accounts SUBCOMMAND --help' for a subcommand's options.",
  ].join('\n');
}

/** `hiresync accounts SUBCOMMAND …`: dispatches to the subcommand named by the first argument. */
export const accounts: Command = Object.freeze({
  name,
  summary,
  description,
  options,
  async run(args, context) {
    const [first, ...rest] = args;
    if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
      context.stdout.write(`${formatAccountsHelp()}\n`);
      return first === undefined ? EXIT.usage : EXIT.ok;
    }
    const subcommand = SUBCOMMANDS.find((s) => s.name === first);
    if (!subcommand) {
      throw new UsageError(
        `unknown subcommand accounts ${JSON.stringify(first)}; choose from ${SUBCOMMANDS.map((s) => s.name).join(', ')}`,
      );
    }
    return subcommand.run(rest, context);
  },
} satisfies Command);
