import { AccountStore } from '../../accounts/account-store.js';
import { loadAccountsConfig } from '../../config/load-config.js';
import { EXIT } from '../command.js';
import type { OptionTable } from '../options.js';
import { openDatabase } from './connections.js';
import { defineSubcommand } from './subcommand.js';

/** `hiresync accounts rekey` takes no option but `--help`. */
export const options = {} as const satisfies OptionTable;

/** `hiresync accounts rekey`: re-seals every credential with the first key of HIRESYNC_SECRET_KEY. */
export const rekey = defineSubcommand({
  name: 'rekey',
  operand: '',
  description: `Re-seals, with the first key of HIRESYNC_SECRET_KEY, every registered account's
    credential sealed with another of its keys, all in one transaction, and prints how
    many. To rotate: put the new key first and keep the old one after it
    (HIRESYNC_SECRET_KEY=new,old), run rekey, then drop the old key.

    Needs DATABASE_URL and HIRESYNC_SECRET_KEY. Exit 0 when done; 1 when a credential
    opens with none of the keys (nothing is changed) or Postgres fails; 2 on a usage or
    configuration error.`,
  options,
  async execute(_values, _name, { env, stdout }) {
    const config = loadAccountsConfig(env, { secretKey: 're-seal the stored credentials' });
    const db = await openDatabase(config.databaseUrl, 'rekey');
    try {
      const { resealed, current } = await new AccountStore(db, config.secretKeys).rekey();
      stdout.write(
        `re-sealed ${resealed} credential(s) with the first key of HIRESYNC_SECRET_KEY; ${current} already sealed with it\n`,
      );
      return EXIT.ok;
    } finally {
      await db.destroy();
    }
  },
});
