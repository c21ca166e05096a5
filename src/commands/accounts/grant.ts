import { accountNameProblem, DEFAULT_ACCOUNT } from '../../account-name.js';
import { UnknownAccountError } from '../../accounts/stored-account.js';
import { loadDatabaseConfig } from '../../config/load-config.js';
import { UsageError } from '../../errors.js';
import {
  grantAccount,
  grantRoleProblem,
  isRegistered,
  MissingRoleError,
} from '../../warehouse/layout/account-grants.js';
import { EXIT } from '../command.js';
import type { OptionTable } from '../options.js';
import { openDatabase } from './connections.js';
import { defineSubcommand } from './subcommand.js';

/** Options of `hiresync accounts grant`. */
export const options = {
  revoke: {
    type: 'boolean',
    description: 'take the access back instead of giving it',
  },
} as const satisfies OptionTable;

/** `hiresync accounts grant NAME ROLE [--revoke]`: read-only access to one account's rows. */
export const grant = defineSubcommand({
  name: 'grant',
  operand: 'NAME ROLE',
  description: `Gives the Postgres role ROLE read-only access to the account NAME (default: schema
    public): usage on its schema and select on every relation there (the tables, their
    history, rejected_records, sync_runs, the typed views, every list resource), the same
    on the relations hiresync makes there later, and on its analytics schema
    (NAME_analytics; analytics for default) when hiresync made it (a schema of that
    name hiresync did not make is left as it is). Through them ROLE reads
    NAME's rows and nothing else, whatever its queries do (the views are security
    barriers over the shared tables); it is given nothing in hiresync's schema and not
    all_accounts. --revoke takes the same back. Idempotent.

    ROLE must exist: make it first (create role ROLE nologin, a group role for the
    account's analysts; or create role ROLE login password '...').

    Run it with hiresync's own DATABASE_URL: what hiresync makes later is readable
    through default privileges of the role that runs it. Needs DATABASE_URL only. Exit 0 when granted (or revoked); 1 when no account NAME is
    registered, its schema is not made yet, or Postgres fails; 2 on a bad NAME or ROLE
    (before connecting) or a ROLE that does not exist (with the create role line to run).`,
  options,
  async execute(values, name, { env, stdout }, [role = '']) {
    const problem =
      (name === DEFAULT_ACCOUNT ? undefined : accountNameProblem(name)) ?? grantRoleProblem(role);
    if (problem) throw new UsageError(problem);
    const config = loadDatabaseConfig(env);
    const db = await openDatabase(config.databaseUrl, 'grant');
    try {
      if (name !== DEFAULT_ACCOUNT && !(await isRegistered(db, name))) {
        throw new UnknownAccountError(name);
      }
      const revoke = values.revoke === true;
      let schemas: string[];
      try {
        ({ schemas } = await grantAccount(db, name, role, { revoke }));
      } catch (error) {
        if (error instanceof MissingRoleError) throw new UsageError(error.message);
        throw error;
      }
      stdout.write(
        revoke
          ? `role ${role} no longer reads account ${name}: revoked usage and select on schema ${schemas.join(' and ')}, and on what hiresync makes there later\n`
          : `role ${role} reads account ${name}, read-only: usage and select on schema ${schemas.join(' and ')}, and on what hiresync makes there later\n`,
      );
      return EXIT.ok;
    } finally {
      await db.destroy();
    }
  },
});
