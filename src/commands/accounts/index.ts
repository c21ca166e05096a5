import { UsageError } from '../../errors.js';
import { type Command, EXIT } from '../command.js';
import { formatTermList, HELP_WIDTH, wrapText } from '../help-text.js';
import { formatSynopsis, type OptionTable } from '../options.js';
import type { SubcommandEntry } from './subcommand.js';

/**
 * The subcommands of `hiresync accounts`, in the order help lists them; each
 * module is imported when its subcommand runs (`accounts add --no-test` loads
 * no BullMQ, ioredis, got or prom-client).
 */
export const SUBCOMMANDS: readonly SubcommandEntry[] = [
  {
    name: 'add',
    operand: 'NAME',
    summary: 'register an account; its secret or key is read from standard input',
    load: async () => (await import('./add.js')).add,
  },
  {
    name: 'update',
    operand: 'NAME',
    summary:
      "change an account's stored credentials (secret on standard input), sub, URLs or settings",
    load: async () => (await import('./update.js')).update,
  },
  {
    name: 'test',
    operand: 'NAME',
    summary: "test an account's credentials: mint a token, read one page of each resource",
    load: async () => (await import('./test.js')).test,
  },
  {
    name: 'authorize',
    operand: 'NAME',
    summary: 'authorize the partner app for an account, through the browser',
    load: async () => (await import('./authorize.js')).authorize,
  },
  {
    name: 'invite',
    operand: 'NAME',
    summary: 'print a single-use link that connects (or re-authorizes) a partner account',
    load: async () => (await import('./invite.js')).invite,
  },
  {
    name: 'list',
    operand: '',
    summary: 'show every account: auth mode, schema, state, last success',
    load: async () => (await import('./list.js')).list,
  },
  {
    name: 'disable',
    operand: 'NAME',
    summary: 'stop syncing an account; its data and credentials stay',
    load: async () => (await import('./state.js')).disable,
  },
  {
    name: 'enable',
    operand: 'NAME',
    summary: 'sync a disabled account again',
    load: async () => (await import('./state.js')).enable,
  },
  {
    name: 'remove',
    operand: 'NAME',
    summary: 'forget an account; --drop-data also drops its data (or what a removed one left)',
    load: async () => (await import('./remove.js')).remove,
  },
  {
    name: 'grant',
    operand: 'NAME ROLE',
    summary: "give a Postgres role read-only access to the account's rows (--revoke: take it back)",
    load: async () => (await import('./grant.js')).grant,
  },
  {
    name: 'rekey',
    operand: '',
    summary: 'seal every stored credential again with the first key',
    load: async () => (await import('./rekey.js')).rekey,
  },
];

/** `hiresync accounts` itself takes no option but `--help`; its subcommands have their own. */
export const options = {} as const satisfies OptionTable;

const name = 'accounts';
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
    return (await subcommand.load()).run(rest, context);
  },
} satisfies Command);
