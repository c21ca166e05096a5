/** The ports of the console's actions: what the worker carries out for it (commands/worker-console.ts). */

/** A connect link the console made: the URL to send, and when it stops working. */
export interface MadeLink {
  account: string;
  url: string;
  expiresAt: string;
  /** The account's older unused links it withdrew. */
  withdrawn: number;
}

/** How the console makes connect links. */
export interface ConsoleLinks {
  /** Why no link can be made by this deployment (what to set), or undefined when links can be made. */
  unavailable: string | undefined;
  /**
   * A new connect link for `account`, which must be a registered partner
   * account in state needs_reauthorization; throws a HiresyncError saying
   * why not otherwise (nothing made).
   */
  create(account: string): Promise<MadeLink>;
}

/** A connect link that can still be used (unused, not withdrawn, unexpired): never its token or URL. */
export interface PendingLink {
  id: string;
  account: string;
  /** The link registers a new account (rather than re-authorizing a registered one). */
  newAccount: boolean;
  createdAt: string;
  expiresAt: string;
}

/** What a test of an account's credentials found (`hiresync accounts test NAME`), redacted. */
export interface AccountTest {
  /** A token was minted and every resource answered `ok`. */
  passed: boolean;
  /** The first line: the token minted, or why none could be, and what to do. */
  token: string;
  /** Per resource: `ok`, `not permitted (scope …)` or `failed`, and what the API said and what to do. */
  resources: { resource: string; outcome: string; detail: string | undefined }[];
}

/**
 * The operations the console's actions carry out, implemented by the worker
 * (commands/worker-console.ts) with the code of the commands they name. Each
 * throws a HiresyncError saying why when it refuses (nothing changed).
 */
export interface ConsoleActions {
  /** The pending connect links of every account, for the page. */
  pendingLinks(): Promise<PendingLink[]>;
  /** Why no invite link can be made by this deployment (what to set), or undefined. */
  inviteUnavailable: string | undefined;
  /** `hiresync accounts invite NAME` for a new account: a link that registers it. */
  invite(account: string): Promise<MadeLink>;
  /** Withdraws the pending link `id` of `account`; false when it was not pending (nothing changed). */
  withdrawLink(account: string, id: string): Promise<boolean>;
  /** Queues an incremental run of (account, resource), as a webhook does; `already`: one asked from here waits or runs. */
  syncNow(account: string, resource: string): Promise<{ jobId: string; already: boolean }>;
  /** `hiresync accounts disable|enable NAME`; `changed` false when it was so already. */
  setEnabled(
    account: string,
    enabled: boolean,
  ): Promise<{ changed: boolean; schedulersRemoved: number }>;
  /** `hiresync accounts test NAME`. */
  test(account: string): Promise<AccountTest>;
}
