import type { IncomingMessage, ServerResponse } from 'node:http';
import { ACCOUNT_NAME, DEFAULT_ACCOUNT } from '../account-name.js';
import { coerceError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Secret } from '../secret.js';
import { BodyBudget } from './body-budget.js';
import type { HttpRoute } from './connect-routes.js';
import { type BodyRead, discardRest, readBody } from './read-body.js';
import {
  parseWebhookEvent,
  planWebhookEvent,
  type WebhookDeletion,
  type WebhookPlan,
} from './webhook-event.js';
import { verifySignature } from './webhook-signature.js';

/** The path of an account's webhook endpoint below HIRESYNC_PUBLIC_URL's path: `/webhooks/<account>`. */
export const WEBHOOKS_PATH = '/webhooks/';

/** Largest body accepted: 1 MiB (the vendor's events are a few kilobytes). */
export const MAX_WEBHOOK_BYTES = 1024 * 1024;

/** How long a body may take to arrive. */
export const WEBHOOK_READ_TIMEOUT_MS = 10_000;

/**
 * How long looking the account up, the event id's claim and queueing the
 * work may take, together: past it the answer is 503 and the vendor retries.
 */
export const WEBHOOK_ACT_TIMEOUT_MS = 1000;

/** What the endpoint needs to know of an account. */
export interface WebhookAccount {
  /** Its webhook secret; undefined: it has none, and every delivery is refused. */
  secret: Secret | undefined;
  /** The resources it syncs (its settings, else HIRESYNC_RESOURCES). */
  resources: readonly string[];
  /** Whether it runs (enabled); a run is queued only for an account that runs. */
  runs: boolean;
}

/** A delete event's work, queued before the answer and done after it. */
export interface WebhookDeleteWork {
  account: string;
  action: string;
  eventId: string | null;
  deletions: WebhookDeletion[];
}

/** Options of {@link webhookRoutes}. */
export interface WebhookRoutesOptions {
  /** HIRESYNC_PUBLIC_URL: its path, if any, prefixes the route (served with and without it). */
  publicUrl: string | undefined;
  /** The account's webhook settings; undefined for an account that does not exist. */
  accountOf: (name: string) => Promise<WebhookAccount | undefined>;
  /**
   * Event ids already acted on (Redis, per account): `claim` resolves false
   * for one claimed before (within the dedupe window); `release` forgets
   * one whose work could not be queued, so the vendor's retry acts.
   */
  ledger: {
    claim: (account: string, eventId: string) => Promise<boolean>;
    release: (account: string, eventId: string) => Promise<void>;
  };
  /** Queues a delete event's work (the worker applies it after the answer). */
  queueDeletion: (work: WebhookDeleteWork) => Promise<void>;
  /** Queues an incremental run of `resource` of `account` (a queued one is not doubled). */
  queueRun: (account: string, resource: string) => Promise<void>;
  logger: Logger;
  /** Default {@link MAX_WEBHOOK_BYTES}. */
  maxBodyBytes?: number;
  /** Default {@link WEBHOOK_READ_TIMEOUT_MS}. */
  readTimeoutMs?: number;
  /** Default {@link WEBHOOK_ACT_TIMEOUT_MS}. */
  actTimeoutMs?: number;
  /**
   * What the bodies not yet authenticated may hold at once (bodies and
   * bytes); one beyond it is answered 503. Default a budget of the route's
   * own with the defaults of HIRESYNC_WEBHOOK_MAX_INFLIGHT and _MAX_BUFFERED_BYTES.
   */
  budget?: BodyBudget;
}

/** Retry-After of a delivery refused while the endpoint reads its limit of bodies. */
export const WEBHOOK_BUSY_RETRY_AFTER_S = 5;

/** A secret no account has: an unknown account's delivery is checked against it, in the same time. */
const NO_SECRET = 'hiresync: no webhook secret';

/** Thrown when the work of a delivery did not finish within its time. */
class TimedOut extends Error {}

/** `work`, or a TimedOut rejection at `deadline` (epoch ms); `work` runs on either way. */
async function byDeadline<T>(deadline: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new TimedOut()), Math.max(0, deadline - Date.now()));
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function answer(
  res: ServerResponse,
  status: number,
  text: string,
  close = false,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'no-store',
    ...(close ? { connection: 'close' } : {}),
    ...headers,
  });
  res.end(`${text}\n`);
}

/** The Greenhouse-Event-ID of a delivery: trimmed, 1 to 200 characters; else null. */
function eventIdOf(req: IncomingMessage): string | null {
  const value = req.headers['greenhouse-event-id'];
  const text = typeof value === 'string' ? value.trim() : '';
  return text.length > 0 && text.length <= 200 ? text : null;
}

/**
 * The webhook endpoint of the worker's HTTP server: `POST <path of
 * HIRESYNC_PUBLIC_URL>/webhooks/<account>` (see docs/privacy.md, "Webhooks").
 *
 * 1. The body is read, at most {@link MAX_WEBHOOK_BYTES} (a larger one: 413,
 *    by its Content-Length before a byte is kept; the rest is dropped, at
 *    most 4 × the bound for 2 s, before the answer)
 *    within {@link WEBHOOK_READ_TIMEOUT_MS} (else 408), within the
 *    `budget` of the bodies not yet authenticated: beyond its bodies or
 *    bytes, 503 with Retry-After, the rest dropped as for the 413. Its
 *    share is given back once the signature is checked, and on every
 *    refusal, timeout or abort.
 * 2. Its `Signature: sha256 <hex>` must be the HMAC-SHA256 of the raw body
 *    with the account's webhook secret (constant-time comparison); a missing
 *    or wrong one, an unknown account, or one without a secret: 401, the
 *    same answer for each, and nothing is kept.
 * 3. A body that is not an event (not JSON, no action, a delete event
 *    without its id): 400, nothing kept.
 * 4. An event that asks nothing of the account (a resource it does not
 *    sync): 200, logged. Else its `Greenhouse-Event-ID` is claimed for
 *    8 days: one claimed already answers 200 and does nothing. Then the work
 *    is queued: a delete event's records for the worker to soft-delete, any
 *    other event an incremental run of its resource. 200 once queued; 503
 *    when it could not be queued within {@link WEBHOOK_ACT_TIMEOUT_MS}
 *    (the claim is given back, so the vendor's retry acts).
 *
 * No sync work is done before the answer. Logs name the account, action,
 * event id and outcome; never the body, the signature or the secret.
 */
export function webhookRoutes(options: WebhookRoutesOptions): HttpRoute {
  const prefix =
    options.publicUrl === undefined ? '' : new URL(options.publicUrl).pathname.replace(/\/+$/, '');
  const settings: Required<WebhookRoutesOptions> = {
    ...options,
    maxBodyBytes: options.maxBodyBytes ?? MAX_WEBHOOK_BYTES,
    readTimeoutMs: options.readTimeoutMs ?? WEBHOOK_READ_TIMEOUT_MS,
    actTimeoutMs: options.actTimeoutMs ?? WEBHOOK_ACT_TIMEOUT_MS,
    budget: options.budget ?? new BodyBudget(),
  };
  return async (req, res) => {
    const url = URL.parse(req.url ?? '/', 'http://localhost');
    if (url === null) return false;
    // The request's path below the public URL's own path (a proxy may strip it or pass it on).
    const path =
      prefix !== '' && url.pathname.startsWith(`${prefix}/`)
        ? url.pathname.slice(prefix.length)
        : url.pathname;
    if (!path.startsWith(WEBHOOKS_PATH)) return false;
    const name = path.slice(WEBHOOKS_PATH.length);
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      answer(res, 405, 'webhooks are delivered with POST');
      return true;
    }
    await deliver(req, res, name, settings);
    return true;
  };
}

/** Whether `name` may be an account's: else its delivery is refused as an unknown account's. */
const isAccountName = (name: string) => name === DEFAULT_ACCOUNT || ACCOUNT_NAME.test(name);

/** Steps 1 to 4 of {@link webhookRoutes} for a delivery to account `name`. */
async function deliver(
  req: IncomingMessage,
  res: ServerResponse,
  name: string,
  settings: Required<WebhookRoutesOptions>,
): Promise<void> {
  const authenticated = await authenticate(req, res, name, settings);
  if (!authenticated) return;
  const { account, deadline } = authenticated;
  const eventId = eventIdOf(req);
  const event = parseWebhookEvent(authenticated.body);
  const plan = 'problem' in event ? event : planWebhookEvent(event, account.resources);
  const action = 'problem' in event ? undefined : event.action;
  const context = { account: name, action, eventId };
  if ('problem' in plan) {
    settings.logger.warn({ ...context, refused: plan.problem }, 'webhook refused');
    return answer(res, 400, `not a webhook event: ${plan.problem}`);
  }
  if (plan.kind === 'ignore' || (plan.kind === 'run' && !account.runs)) {
    const reason = plan.kind === 'ignore' ? plan.reason : 'the account runs nothing now';
    settings.logger.info({ ...context, outcome: 'ignored', reason }, 'webhook');
    return answer(res, 200, `nothing to do: ${reason}`);
  }
  await queueEvent(res, plan, context, deadline, settings);
}

/**
 * Reads the body within its share of the budget and checks its signature:
 * the body and the account once they pass, undefined once answered.
 */
async function authenticate(
  req: IncomingMessage,
  res: ServerResponse,
  name: string,
  settings: Required<WebhookRoutesOptions>,
): Promise<{ body: Buffer; account: WebhookAccount; deadline: number } | undefined> {
  const { maxBodyBytes: maxBytes, logger } = settings;
  const allowance = settings.budget.enter();
  try {
    const read = allowance
      ? await readBody(req, { maxBytes, timeoutMs: settings.readTimeoutMs, allowance })
      : ({ ok: false, reason: 'busy' } as const);
    if (!read.ok) {
      allowance?.release();
      const account = isAccountName(name) ? name : undefined;
      logger.warn({ account, refused: read.reason }, 'webhook refused');
      await answerUnread(req, res, read.reason, maxBytes);
      return undefined;
    }
    const deadline = Date.now() + settings.actTimeoutMs;
    const account = await signedAccount(req, res, name, read.body, deadline, settings);
    return account && { body: read.body, account, deadline };
  } finally {
    // Every way out: the bytes of a body not authenticated are no longer held.
    allowance?.release();
  }
}

/** Answers a delivery whose body was not read, for `reason`. */
async function answerUnread(
  req: IncomingMessage,
  res: ServerResponse,
  reason: (BodyRead & { ok: false })['reason'],
  maxBytes: number,
): Promise<void> {
  if (reason === 'too large' || reason === 'busy') {
    // Nothing of it is kept: the rest is dropped as it comes (briefly), then
    // answered, so that a client done sending reads the answer, not a reset.
    await discardRest(req, { maxBytes: 4 * maxBytes, timeoutMs: 2000 });
    if (reason === 'busy') {
      answer(res, 503, 'too many deliveries at once: try again later', true, {
        'retry-after': String(WEBHOOK_BUSY_RETRY_AFTER_S),
      });
    } else {
      answer(res, 413, `body larger than ${maxBytes} bytes`, true);
    }
  } else if (reason === 'timeout') {
    answer(res, 408, 'body not received in time', true);
  } else {
    res.destroy();
  }
}

/** Account `name`, once `body`'s signature is checked with its secret; undefined once answered. */
async function signedAccount(
  req: IncomingMessage,
  res: ServerResponse,
  name: string,
  body: Buffer,
  deadline: number,
  { accountOf, logger }: Required<WebhookRoutesOptions>,
): Promise<WebhookAccount | undefined> {
  const known = isAccountName(name);
  let account: WebhookAccount | undefined;
  try {
    account = known ? await byDeadline(deadline, accountOf(name)) : undefined;
  } catch (error) {
    logger.error({ account: name, err: coerceError(error) }, 'webhook: account not read');
    answer(res, 503, 'try again later');
    return undefined;
  }
  const secret = account?.secret?.reveal();
  // An unknown account's delivery is checked all the same: the answer takes
  // the time a wrong signature takes, and says nothing of whether it exists.
  const valid = verifySignature(body, req.headers.signature, secret ?? NO_SECRET);
  if (account && secret !== undefined && valid) return account;
  const refused = !account
    ? 'unknown account'
    : secret === undefined
      ? 'no webhook secret'
      : 'bad signature';
  logger.warn({ account: known ? name : undefined, refused }, 'webhook refused');
  answer(res, 401, 'signature not valid for this endpoint');
  return undefined;
}

/**
 * Claims the event id and queues the work of `plan` by `deadline`, and
 * answers; the claim is given back when the work fails.
 */
async function queueEvent(
  res: ServerResponse,
  plan: Exclude<WebhookPlan, { kind: 'ignore' }>,
  context: { account: string; action: string | undefined; eventId: string | null },
  deadline: number,
  { ledger, logger, queueDeletion, queueRun }: Required<WebhookRoutesOptions>,
): Promise<void> {
  const { account: name, action, eventId } = context;
  let claimed = false;
  const act = (async () => {
    if (eventId !== null) {
      if (!(await ledger.claim(name, eventId))) return 'duplicate' as const;
      claimed = true;
    }
    if (plan.kind === 'delete') {
      await queueDeletion({
        account: name,
        action: action as string,
        eventId,
        deletions: plan.deletions,
      });
    } else {
      await queueRun(name, plan.resource);
    }
    return 'queued' as const;
  })();
  try {
    const outcome = await byDeadline(deadline, act);
    const what =
      plan.kind === 'delete'
        ? { deletions: plan.deletions.map((d) => ({ resource: d.resource, ids: d.ids.length })) }
        : { resource: plan.resource };
    logger.info({ ...context, outcome, ...(outcome === 'queued' ? what : {}) }, 'webhook');
    return answer(res, 200, outcome === 'duplicate' ? 'duplicate event: ignored' : 'queued');
  } catch (error) {
    const timedOut = error instanceof TimedOut;
    logger.error(
      { ...context, outcome: 'failed', err: timedOut ? undefined : coerceError(error), timedOut },
      'webhook: work not queued; the vendor retries',
    );
    // Given back once the work has failed (now, or when it settles late), never
    // while it may yet be queued: a retry then either acts or is a duplicate.
    void act
      .then(
        () => undefined,
        async () => {
          if (claimed && eventId !== null) await ledger.release(name, eventId);
        },
      )
      .catch((releasing: unknown) =>
        logger.error(
          { ...context, err: coerceError(releasing) },
          'webhook: event id not given back; its retries will be taken for duplicates',
        ),
      );
    return answer(res, 503, 'try again later');
  }
}
