/**
 * What REDIS_URL names, in the forms of the contract (interface.md,
 * "Production services"): one server (`redis://`, `rediss://`), a Sentinel
 * deployment (`redis+sentinel://[:PASSWORD@]HOST:PORT[,HOST:PORT…]/MASTER[/DB]`)
 * or a Cluster (`redis+cluster://[:PASSWORD@]HOST:PORT[,HOST:PORT…]`), each
 * with TLS when the scheme starts `rediss`. Pure: the one place these forms
 * are read; src/redis/connect.ts makes the connections.
 */

/** A host and port of a Sentinel or a Cluster node. */
export interface RedisNode {
  host: string;
  port: number;
}

/** What every form holds: TLS, the credentials, and a text to name it by. */
interface TargetBase {
  /** `rediss…` schemes: every connection is TLS, verified (REDIS_CA_FILE or the system's CAs). */
  tls: boolean;
  /** The PEM of REDIS_CA_FILE: the only CAs trusted when set. */
  ca?: string;
  username?: string;
  password?: string;
  /** The URL without its password, for messages. */
  shown: string;
}

/** One server: the URL as ioredis reads it (database index, query options). */
export interface ServerTarget extends TargetBase {
  kind: 'server';
  /** REDIS_URL as given (the demo passes it on). */
  url: string;
  host: string;
  port: number;
  db: number;
  /** `?family=4|6`: the address family of a host name. */
  family?: number;
}

/** A master found through Sentinels, failing over with it. */
export interface SentinelTarget extends TargetBase {
  kind: 'sentinel';
  sentinels: RedisNode[];
  master: string;
  db: number;
  /** REDIS_SENTINEL_PASSWORD: the Sentinels' own password, when they have one. */
  sentinelPassword?: string;
}

/** A Redis Cluster, found from any of its nodes. */
export interface ClusterTarget extends TargetBase {
  kind: 'cluster';
  nodes: RedisNode[];
}

export type RedisTarget = ServerTarget | SentinelTarget | ClusterTarget;

/** The schemes REDIS_URL may have. */
export const REDIS_SCHEMES = [
  'redis:',
  'rediss:',
  'redis+sentinel:',
  'rediss+sentinel:',
  'redis+cluster:',
  'rediss+cluster:',
] as const;

/** Why REDIS_URL cannot be read: worded to follow "REDIS_URL ". */
export class RedisUrlProblem extends Error {}

const NODE = /^(\[[0-9A-Fa-f:.]+\]|[^:/[\]]+):(\d{1,5})$/;

function nodesOf(list: string, form: string): RedisNode[] {
  return list.split(',').map((item) => {
    const match = NODE.exec(item.trim());
    const port = Number(match?.[2]);
    if (!match?.[1] || !(port >= 1 && port <= 65535)) {
      throw new RedisUrlProblem(
        `names "${item.trim()}" where a HOST:PORT belongs (the form is ${form})`,
      );
    }
    return { host: match[1].replace(/^\[|\]$/g, ''), port };
  });
}

/** Percent-decoded, or a problem that quotes nothing of the text (it may be a password). */
function decoded(text: string, what: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new RedisUrlProblem(`has a malformed percent-encoding (%XX) in its ${what}`);
  }
}

/** `user:password@`, decoded. */
function credentials(auth: string): { username?: string; password?: string } {
  if (auth === '') return {};
  const colon = auth.indexOf(':');
  const user = decoded(colon < 0 ? auth : auth.slice(0, colon), 'user name');
  const password = colon < 0 ? undefined : decoded(auth.slice(colon + 1), 'password');
  return {
    ...(user === '' ? {} : { username: user }),
    ...(password === undefined || password === '' ? {} : { password }),
  };
}

/** The URL as messages show it: its user, never its password (`***`). */
function shownAs(scheme: string, auth: { username?: string; password?: string }, rest: string) {
  const user = auth.username === undefined ? '' : encodeURIComponent(auth.username);
  const who = auth.password === undefined ? (user === '' ? '' : `${user}@`) : `${user}:***@`;
  return `${scheme}://${who}${rest}`;
}

/**
 * The only query parameter REDIS_URL may carry: ioredis lets a URL's
 * parameters override every option hiresync sets (`tls`, `password`,
 * `maxRetriesPerRequest`…), so any other is refused rather than obeyed or
 * ignored; `family` (4 or 6) picks the address family of a host name.
 */
const QUERY_ALLOWED = new Set(['family']);

const SENTINEL_FORM = 'redis+sentinel://[:PASSWORD@]HOST:PORT[,HOST:PORT…]/MASTER[/DB]';
const CLUSTER_FORM = 'redis+cluster://[:PASSWORD@]HOST:PORT[,HOST:PORT…]';

/**
 * Reads REDIS_URL. Throws {@link RedisUrlProblem} for a scheme of none of
 * the forms, a malformed host list, a Sentinel URL without its master, a
 * database index that is not a whole number, or a Cluster URL with one
 * (a Cluster has database 0 only).
 */
export function parseRedisUrl(text: string): RedisTarget {
  const url = text.trim();
  const scheme = /^([a-z+]+):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined || !REDIS_SCHEMES.includes(`${scheme}:` as never)) {
    throw new RedisUrlProblem(`must be a ${REDIS_SCHEMES.map((s) => `${s}//`).join(', ')} URL`);
  }
  const tls = scheme.startsWith('rediss');
  // The credentials end at the last `@` (a password may hold `/`, `?`, `#` or
  // `@`); nothing before it is ever quoted in a problem.
  const body = url.slice(scheme.length + 3);
  const at = body.lastIndexOf('@');
  const auth = credentials(at < 0 ? '' : body.slice(0, at));
  const after = body.slice(at + 1);
  const [place = '', query] = after.split(/\?(.*)/s, 2);
  if (place.includes('#')) throw new RedisUrlProblem('may not hold a fragment (#…)');
  const params = new URLSearchParams(query ?? '');
  for (const key of params.keys()) {
    if (!QUERY_ALLOWED.has(key) || scheme.includes('+')) {
      throw new RedisUrlProblem(
        `has the query parameter "${key}", which hiresync does not take${scheme.includes('+') ? '' : ' (only family=4|6)'}: give the password before the host ([:PASSWORD@]HOST), TLS by the rediss scheme and REDIS_CA_FILE`,
      );
    }
  }
  const shown = shownAs(scheme, auth, after);
  if (scheme === 'redis' || scheme === 'rediss') {
    const [hostPort = '', ...path] = place.split('/');
    const node = /^(\[[0-9A-Fa-f:.]+\]|[^:/[\]]+)(?::(\d{1,5}))?$/.exec(hostPort);
    const port = Number(node?.[2] ?? 6379);
    if (!node?.[1] || !(port >= 1 && port <= 65535)) {
      throw new RedisUrlProblem(
        `names no host, or one that is not HOST[:PORT] (the form is ${scheme}://[:PASSWORD@]HOST:PORT[/DB])`,
      );
    }
    const db = path.length === 0 || path[0] === '' ? '0' : path.join('/');
    if (!/^\d{1,5}$/.test(db)) {
      throw new RedisUrlProblem(
        `names database "${db}", which is not a database index (a whole number >= 0; the form is ${scheme}://[:PASSWORD@]HOST:PORT[/DB])`,
      );
    }
    const family = params.get('family');
    if (family !== null && family !== '4' && family !== '6') {
      throw new RedisUrlProblem(`has family=${JSON.stringify(family)}: it may be 4 or 6`);
    }
    return {
      kind: 'server',
      url,
      host: node[1].replace(/^\[|\]$/g, ''),
      port,
      db: Number(db),
      ...(family === null ? {} : { family: Number(family) }),
      tls,
      shown,
      ...auth,
    };
  }
  const [hosts = '', ...path] = place.split('/');
  if (scheme.endsWith('+cluster')) {
    if (path.some((part) => part !== '')) {
      throw new RedisUrlProblem(
        `names a path ("/${path.join('/')}"), but a Redis Cluster has database 0 only (the form is ${CLUSTER_FORM})`,
      );
    }
    return { kind: 'cluster', nodes: nodesOf(hosts, CLUSTER_FORM), tls, shown, ...auth };
  }
  const [master = '', db = '0', ...extra] = path;
  if (master === '' || extra.length > 0) {
    throw new RedisUrlProblem(
      `must name the master after the Sentinels (the form is ${SENTINEL_FORM})`,
    );
  }
  if (!/^\d{1,5}$/.test(db)) {
    throw new RedisUrlProblem(
      `names database "${db}", which is not a database index (a whole number >= 0; the form is ${SENTINEL_FORM})`,
    );
  }
  return {
    kind: 'sentinel',
    sentinels: nodesOf(hosts, SENTINEL_FORM),
    master: decoded(master, 'master name'),
    db: Number(db),
    tls,
    shown,
    ...auth,
  };
}

/**
 * The prefix of every key hiresync and BullMQ write: HIRESYNC_REDIS_PREFIX,
 * wrapped in a hash tag (`{hiresync}`) on a Cluster, so that every key of
 * the queue, the checkpoints, the tokens, the locks and the pacing state is in
 * one hash slot, as BullMQ's scripts and hiresync's need (a script may only
 * touch keys of one slot). Elsewhere the prefix as given.
 */
export function keyPrefix(prefix: string, target: Pick<RedisTarget, 'kind'>): string {
  return target.kind === 'cluster' ? `{${prefix}}` : prefix;
}
