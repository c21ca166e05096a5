import { accountNameProblem, DEFAULT_ACCOUNT } from '../../accounts/account.js';
import { UsageError } from '../../errors.js';

/**
 * Throws a UsageError (exit 2) unless `name` can name a registered account;
 * `default`, the environment's account, gets its own explanation: its
 * credentials are the environment's, not a row that `action` could change.
 */
export function checkAccountName(name: string, action: string): void {
  if (name === DEFAULT_ACCOUNT) {
    throw new UsageError(
      `the account default is the environment's credentials (HIRESYNC_CLIENT_ID/HIRESYNC_CLIENT_SECRET or HIRESYNC_API_KEY), not a registered account: it cannot be ${action}`,
    );
  }
  const problem = accountNameProblem(name);
  if (problem) throw new UsageError(problem);
}
