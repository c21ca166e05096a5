import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AccountState } from './account-registry.js';
import type { CursorCodec } from './cursor-codec.js';
import type { Dataset, SimResource } from './dataset.js';
import { type Faults, sendOversized } from './faults.js';
import { json, unprocessable } from './http-messages.js';
import type { IssuedTokens } from './issued-tokens.js';
import { type ListQuery, readListQuery } from './list-query.js';
import { scopesOf } from './partner-grants.js';
import { rateLimitHeaders, sendTooManyRequests } from './rate-limiter.js';
import type { SimulatorOptions, SimulatorStats } from './simulator-options.js';

/** What {@link ListEndpoint} works with. */
export interface ListEndpointOptions {
  options: SimulatorOptions;
  /** Counts list requests, their statuses, 429s and the targets received. */
  stats: SimulatorStats;
  faults: Faults;
  tokens: IssuedTokens;
  cursors: CursorCodec;
  /** The default account, whose cursors carry no account. */
  defaultAccount: AccountState;
  /** The simulator's base URL, the origin of `next` links. */
  baseUrl: () => string;
}

/** One list request, routed to the account whose token it presents. */
export interface ListRequest {
  resource: SimResource;
  url: URL;
  /** The raw request target (path and query). */
  target: string;
  account: AccountState;
}

/** A rendered page: its body, and where the walk stands. */
interface Page {
  text: string;
  /** Index of the page's last record; -1 for an empty page. */
  lastIndex: number;
  hasMore: boolean;
}

/**
 * GET on a list path: the injected and random faults, the account's
 * fixed-window rate limit, 401/403 (a non-administrator; with `resourceScopes`,
 * a partner token without the list's scope), the query rules (422), then a page of
 * the account's data in id-descending order with a `Link: rel="next"` to a
 * signed cursor while records remain.
 */
export class ListEndpoint {
  readonly #options: SimulatorOptions;
  readonly #stats: SimulatorStats;
  readonly #faults: Faults;
  readonly #tokens: IssuedTokens;
  readonly #cursors: CursorCodec;
  readonly #default: AccountState;
  readonly #baseUrl: () => string;
  readonly #pageCache = new Map<string, Page>();

  constructor(deps: ListEndpointOptions) {
    this.#options = deps.options;
    this.#stats = deps.stats;
    this.#faults = deps.faults;
    this.#tokens = deps.tokens;
    this.#cursors = deps.cursors;
    this.#default = deps.defaultAccount;
    this.#baseUrl = deps.baseUrl;
  }

  /** Serves one list request and counts its status. */
  async serve(req: IncomingMessage, res: ServerResponse, request: ListRequest): Promise<void> {
    const status = await this.#answer(req, res, request);
    const { account } = request;
    this.#stats.byStatus[status] = (this.#stats.byStatus[status] ?? 0) + 1;
    account.stats.byStatus[status] = (account.stats.byStatus[status] ?? 0) + 1;
  }

  /** Answers one list request; returns the status sent (0: the connection was dropped). */
  async #answer(
    req: IncomingMessage,
    res: ServerResponse,
    { resource, url, target, account }: ListRequest,
  ): Promise<number> {
    const stats = this.#stats;
    stats.listRequests += 1;
    account.stats.listRequests += 1;
    const previousTarget = stats.receivedTargets.at(-1);
    stats.receivedTargets.push(target);
    if (stats.receivedTargets.length > 1000) stats.receivedTargets.shift();
    const opts = this.#options;
    const faults = this.#faults;
    const random = opts.randomFaults;
    if (opts.latencyMs) await sleep(opts.latencyMs);

    const fault = faults.next(account.faults);
    if (fault) faults.count(fault.kind);
    if (fault?.kind === 'delay') await sleep(fault.ms);
    if (random && faults.chance(random.slow)) {
      faults.count('slow');
      await sleep(random.slowMs ?? 2000);
    }
    if (fault?.kind === 'drop-connection' || (random && faults.chance(random.dropConnection))) {
      if (!fault) faults.count('drop-connection');
      req.socket.destroy();
      return 0;
    }

    const now = Date.now();
    const window = account.window;
    const limit = window?.rate.limit;
    let rateHeaders: Record<string, string> = {};
    if (window) {
      const decision = window.take(now);
      if (!decision.allowed) return this.#tooMany(res, account, decision.retryAfterS, limit);
      rateHeaders = rateLimitHeaders(window, decision, opts.rateLimitHeaders ?? false, {
        format: opts.rateLimitResetFormat ?? 'seconds',
        now,
        clockSkewMs: opts.clockSkewMs ?? 0,
      });
    }
    if (fault?.kind === 'rate-limit')
      return this.#tooMany(res, account, fault.retryAfterS, limit, fault.format);
    if (random && faults.chance(random.rateLimit)) {
      faults.count('rate-limit');
      return this.#tooMany(res, account, 1, limit);
    }

    if (random && faults.chance(random.revokeTokens)) {
      faults.count('revoke-tokens');
      this.#tokens.revoke();
    }
    const token = this.#tokens.presentedBy(req);
    if (!token || token.revoked || token.expiresAt <= now || token.grant?.revoked) {
      json(res, 401, { message: 'Unauthorized' }, rateHeaders);
      return 401;
    }
    if (
      account.forbidden ||
      (token.sub !== undefined && account.nonAdminSubs.includes(token.sub))
    ) {
      json(
        res,
        403,
        { message: 'Forbidden', errors: ['The authorizing user must be a site administrator'] },
        rateHeaders,
      );
      return 403;
    }
    const scope = `harvest:${resource}:list`;
    const granted = token.grant ? scopesOf(token.grant.scope) : [];
    if (opts.resourceScopes && granted.length > 0 && !granted.includes(scope)) {
      // A partner grant without this list's scope: this list only is refused.
      // A grant that names no scope at all reads every list (the live service
      // fixes a partner app's scopes itself; nothing was asked of it here).
      json(res, 403, { message: `Missing required scope: ${scope}` }, rateHeaders);
      return 403;
    }
    if (fault?.kind === 'status' || (random && faults.chance(random.serverError))) {
      if (!fault) faults.count('server-error');
      const status = fault?.kind === 'status' ? fault.status : 503;
      json(res, status, { message: 'Service Unavailable' }, rateHeaders);
      return status;
    }

    const ds = account.dataset;
    // Cursors of the default account carry no account, as they did before there were others.
    const cursorAccount = account === this.#default ? undefined : account.name;
    const query = readListQuery(url, resource, cursorAccount, this.#cursors);
    if ('errors' in query) {
      // Limit/Remaining/Reset on every response when sent in full (v3), a 422 included.
      unprocessable(res, query.errors, opts.rateLimitHeaders ? rateHeaders : {});
      return 422;
    }
    const { perPage, status, dates, inactiveOnly, showHidden } = query;
    const page = this.#page(account, resource, query);
    const { lastIndex, hasMore } = page;
    const headers = { ...rateHeaders };
    if (fault?.kind === 'oversized-body') {
      await sendOversized(res, fault, headers);
      return 200;
    }
    const loops = fault?.kind === 'self-next' || fault?.kind === 'previous-next';
    if (hasMore || loops) {
      const cursor = this.#cursors.encode({
        resource,
        below: ds.idOf(resource, lastIndex),
        perPage,
        status,
        dates,
        account: cursorAccount,
        inactiveOnly,
        showHidden,
      });
      const base = this.#baseUrl();
      let next = `${base}${url.pathname}?cursor=${cursor}`;
      if (fault?.kind === 'next-origin') next = `${fault.origin}${url.pathname}?cursor=${cursor}`;
      if (fault?.kind === 'self-next') next = `${base}${target}`;
      if (fault?.kind === 'previous-next') next = `${base}${previousTarget ?? target}`;
      headers.link = `<${next}>; rel="next"`;
    }
    if (fault?.kind === 'malformed-body') {
      res.writeHead(200, { 'content-type': 'text/html', ...headers });
      res.end('<html>Bad gateway</html>');
      return 200;
    }
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(page.text),
      ...headers,
    });
    res.end(page.text);
    return 200;
  }

  /**
   * The page `query` asks of `account`'s `resource`: up to `perPage` present,
   * matching records below `query.below`, id-descending. Kept and served
   * again while the data is unchanged when `cachePages` is set.
   */
  #page(account: AccountState, resource: SimResource, query: ListQuery): Page {
    const ds = account.dataset;
    const { below, perPage, status, dates, inactiveOnly, showHidden } = query;
    const cacheKey = `${account.name}|${resource}|${below}|${perPage}|${status}|${JSON.stringify(dates)}|${inactiveOnly}|${showHidden}|${ds.version}`;
    const cached = this.#options.cachePages ? this.#pageCache.get(cacheKey) : undefined;
    if (cached) return cached;
    const matches = (index: number) => matchesQuery(ds, resource, index, query);
    const records: unknown[] = [];
    let index =
      below === Number.POSITIVE_INFINITY ? ds.size(resource) - 1 : ds.indexBelow(resource, below);
    let lastIndex = -1;
    for (; index >= 0 && records.length < perPage; index -= 1) {
      if (!ds.isPresent(resource, index)) continue;
      if (!matches(index)) continue;
      records.push(ds.record(resource, index));
      lastIndex = index;
    }
    let hasMore = false;
    for (; index >= 0; index -= 1) {
      if (ds.isPresent(resource, index) && matches(index)) {
        hasMore = true;
        break;
      }
    }
    const page = { text: JSON.stringify(records), lastIndex, hasMore };
    if (this.#options.cachePages) this.#pageCache.set(cacheKey, page);
    return page;
  }

  /** Answers 429 (see {@link sendTooManyRequests}) and counts it. */
  #tooMany(
    res: ServerResponse,
    account: AccountState,
    retryAfterS: number,
    limit: number | undefined,
    format = this.#options.retryAfterFormat ?? 'seconds',
  ): number {
    this.#stats.rateLimited += 1;
    account.stats.rateLimited += 1;
    const sendLimit = this.#options.rateLimitHeadersOn429 ? limit : undefined;
    sendTooManyRequests(res, retryAfterS, format, sendLimit);
    return 429;
  }
}

/** Whether record `index` is listed by the walk (`active`) and passes its `status` and date filters. */
function matchesQuery(
  ds: Dataset,
  resource: SimResource,
  index: number,
  query: ListQuery,
): boolean {
  const { status, dates, inactiveOnly, showHidden } = query;
  return (
    ds.listed(resource, index, inactiveOnly, showHidden) &&
    (status === undefined || ds.matches(resource, index, { status })) &&
    ds.withinDates(resource, index, dates)
  );
}
