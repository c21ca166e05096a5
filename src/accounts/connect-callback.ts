import type { SecretKeys } from '../config/secret-keys.js';
import { coerceError, HiresyncError } from '../errors.js';
import { registerSecret } from '../secret.js';
import { AccountStore } from './account-store.js';
import {
  type AuthorizationOutcome,
  type AuthorizationPorts,
  type AuthorizationTarget,
  completeAuthorization,
} from './complete-authorization.js';
import { checkLinkedAccount } from './connect-links.js';
import {
  type ClaimedLink,
  claimConnectState,
  type LinkRefusal,
  type StateRefusal,
  useConnectLink,
} from './connect-states.js';
import { StoredDataError } from './register-account.js';
import { type AccountInfo, isUndefinedTable } from './stored-account.js';

/** What the connect callback reaches besides the authorization's ports. */
export interface ConnectCallbackPorts extends Omit<AuthorizationPorts, 'store' | 'warn'> {
  /** Warnings of connecting `account`, such as one the all_accounts views leave out. */
  warn: (account: string, warning: string) => void;
  /** HIRESYNC_SECRET_KEY: states' verifiers open with any of its keys; tokens are sealed with the first. */
  secretKeys: SecretKeys;
  /** The redirect URI of the links' authorization requests (HIRESYNC_PUBLIC_URL + `/oauth/callback`). */
  redirectUri: string;
  /** Schedules a connected (and enabled) account's runs now; its failure is reported, not thrown. */
  schedule?: ((account: string) => Promise<unknown>) | undefined;
}

/** A request to the callback: its state, the browser's binding, and what the vendor answered. */
export interface ConnectCallbackRequest {
  state: string;
  /** Hash of the nonce cookie the browser sent back for this state, if any. */
  browserHash: string | undefined;
  codes: string[];
  errors: string[];
  errorDescription: string | undefined;
}

/** What became of a callback; every refusal and failure changes nothing but the state it consumed. */
export type ConnectCallbackOutcome =
  | { kind: 'state refused'; refusal: StateRefusal }
  | { kind: 'malformed'; account: string; problem: string }
  | { kind: 'vendor error'; account: string; error: string; description: string | undefined }
  | { kind: 'link refused'; refusal: LinkRefusal }
  /** Rows of an earlier registration of the name were stored since the link was made. */
  | { kind: 'stored data'; account: string; error: StoredDataError }
  /** The code could not be exchanged, or the account not stored. */
  | { kind: 'failed'; account: string; error: Error }
  | {
      kind: 'connected';
      name: string;
      account: AccountInfo | undefined;
      previousState: AccountInfo['state'] | undefined;
      /** Why its schema is not ready (the token is stored all the same). */
      unfinished?: string;
      /** Why its runs could not be scheduled at once (the schedules pick it up). */
      notScheduled?: Error;
    };

/** Thrown inside the link's transaction: an outcome to answer, the link left unused. */
class Refusal extends HiresyncError {
  constructor(readonly outcome: ConnectCallbackOutcome) {
    super(outcome.kind);
  }
}

/** Postgres's undefined_column: the control schema predates a migration of connect links (0014). */
export function isUndefinedColumn(error: unknown): boolean {
  return (error as { code?: unknown }).code === '42703';
}

/**
 * Completes the authorization a connect link's callback brings back: claims
 * the state (single use, bound to the browser that opened the link), reads
 * the vendor's answer, and holding the link's row lock exchanges the code
 * and stores the account ({@link completeAuthorization}), marking the link
 * used; then schedules the account. One callback at a time per returned
 * function: each holds a connection of the pool (the link's row lock) while
 * its exchange and registration take others from the same pool, so as many
 * callbacks at once as the pool has connections would wait for each other
 * for good. A control schema that predates a migration is thrown.
 */
export function connectCallback(
  ports: ConnectCallbackPorts,
): (request: ConnectCallbackRequest) => Promise<ConnectCallbackOutcome> {
  let turn: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(work: () => Promise<T>): Promise<T> => {
    const run = turn.then(work, work);
    turn = run.catch(() => undefined);
    return run;
  };
  const keys = ports.secretKeys.reveal();
  return async (request) => {
    const claimed = await claimConnectState(ports.db, request.state, request.browserHash, keys);
    if (!claimed.ok) return { kind: 'state refused', refusal: claimed.refusal };
    const { link } = claimed;
    const answer = readAnswer(link.account, request);
    if (typeof answer !== 'string') return answer;
    registerSecret(answer);
    const connected = await inTurn(() => redeem(ports, link, answer));
    if (connected.kind !== 'connected') return connected;
    return schedule(ports, connected);
  };
}

/** The vendor's answer: its code, or what to say of the error or malformed answer. */
function readAnswer(
  account: string,
  request: ConnectCallbackRequest,
): string | ConnectCallbackOutcome {
  const { errors, codes } = request;
  if (errors.length > 1 || codes.length > 1) {
    return { kind: 'malformed', account, problem: 'it carries code or error more than once' };
  }
  const error = errors[0];
  if (error !== undefined) {
    return { kind: 'vendor error', account, error, description: request.errorDescription };
  }
  const code = codes[0];
  if (code === undefined || code === '') {
    return { kind: 'malformed', account, problem: 'it carries neither a code nor an error' };
  }
  return code;
}

/** Redeems the code under the link's row lock; the link is marked used only when it connected. */
async function redeem(
  ports: ConnectCallbackPorts,
  link: ClaimedLink,
  code: string,
): Promise<ConnectCallbackOutcome> {
  const account = link.account;
  try {
    const used = await useConnectLink(ports.db, link, async () => {
      const outcome = await connect(ports, link, code);
      if (outcome.kind === 'exchange failed') throw outcome.error;
      return outcome;
    });
    if (!used.ok) return { kind: 'link refused', refusal: used.refusal };
    const { account: info, previousState } = used.value;
    const unfinished = used.value.kind === 'not ready' ? used.value.error.message : undefined;
    return {
      kind: 'connected',
      name: account,
      account: info,
      previousState,
      ...(unfinished === undefined ? {} : { unfinished }),
    };
  } catch (error) {
    if (error instanceof Refusal) return error.outcome;
    if (isUndefinedTable(error) || isUndefinedColumn(error)) throw error;
    return { kind: 'failed', account, error: coerceError(error) };
  }
}

/** Exchanges the code and stores the token for the link's account, registered or new. */
async function connect(
  ports: ConnectCallbackPorts,
  link: ClaimedLink,
  code: string,
): Promise<AuthorizationOutcome> {
  const { db, partner } = ports;
  const name = link.account;
  const store = new AccountStore(db, ports.secretKeys, { partner });
  const existing = await store.get(name);
  let target: AuthorizationTarget;
  if (existing) {
    if (existing.authMode !== 'partner' || existing.authUrl === null) {
      throw new Refusal({ kind: 'link refused', refusal: { kind: 'not partner', account: name } });
    }
    target = { existing, authUrl: existing.authUrl };
  } else {
    if (link.baseUrl === null || link.authUrl === null) {
      throw new Refusal({ kind: 'link refused', refusal: { kind: 'removed', account: name } });
    }
    const owner = await checkLinkedAccount(db, store, link.id, name).catch((error: unknown) => {
      if (!(error instanceof StoredDataError)) throw error;
      throw new Refusal({ kind: 'stored data', account: name, error });
    });
    target = { register: { baseUrl: link.baseUrl, authUrl: link.authUrl, owner } };
  }
  const grant = { name, code, redirectUri: ports.redirectUri, codeVerifier: link.codeVerifier };
  const warn = (warning: string) => ports.warn(name, warning);
  return completeAuthorization({ ...ports, store, warn }, target, grant);
}

/** Schedules a connected account that is enabled; a failure is reported in the outcome. */
async function schedule(
  ports: ConnectCallbackPorts,
  connected: Extract<ConnectCallbackOutcome, { kind: 'connected' }>,
): Promise<ConnectCallbackOutcome> {
  if (connected.account?.state !== 'enabled' || !ports.schedule) return connected;
  try {
    await ports.schedule(connected.name);
    return connected;
  } catch (error) {
    return { ...connected, notScheduled: coerceError(error) };
  }
}
