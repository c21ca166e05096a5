import { isLoopbackHost } from '../config/fields.js';
import { UsageError } from '../errors.js';
import { ApiSimulator } from '../simulator/api-simulator.js';
import { EXTRA_RESOURCE_NAMES, EXTRA_RESOURCES } from '../simulator/extra-resources.js';
import { SIMULATOR_SHAPES, V3_RATE_LIMIT } from '../simulator/shape.js';
import { simulatedAccounts } from '../simulator/simulated-accounts.js';
import type { SimulatorShape } from '../simulator/simulator-options.js';
import {
  PARTNER_CLIENT_ID,
  PARTNER_CLIENT_SECRET,
  type SimulatorOptions,
} from '../simulator/simulator-options.js';
import { startWebhookFeed } from '../simulator/webhook-feed.js';
import { defineCommand, EXIT } from './command.js';
import { intOption, parseRateLimit, probabilityOption } from './number-options.js';
import type { OptionTable } from './options.js';

/** Options of `hiresync simulate`. */
export const options = {
  shape: {
    type: 'string',
    value: 'SHAPE',
    description:
      "seed: the shapes api-spec.md shows; v3: the live service's (flat tracking links, expires_at tokens, a 75/30s window unless --rate-limit says otherwise, X-RateLimit-Limit/Remaining/Reset as epoch seconds on every list response but 429s, pipe date filters, a 1-minute authorization code) and the v3 world: applications, application_stages, job_interview_stages, offers, openings, close_reasons, rejection_details, rejection_reasons, eeoc, demographic_answers, demographic_questions, demographic_answer_options, users, departments and offices, consistent with the jobs, job posts and tracking links (docs/simulator-world.md)",
    default: 'seed',
  },
  host: {
    type: 'string',
    value: 'ADDR',
    description: 'loopback address to listen on',
    default: '127.0.0.1',
  },
  port: { type: 'string', value: 'N', description: 'port; 0 picks a free one', default: '8910' },
  records: { type: 'string', value: 'N', description: 'records per resource', default: '1000' },
  jobs: { type: 'string', value: 'N', description: 'records of jobs (overrides --records)' },
  'job-posts': {
    type: 'string',
    value: 'N',
    description: 'records of job posts (overrides --records)',
  },
  'tracking-links': {
    type: 'string',
    value: 'N',
    description: 'records of tracking links (overrides --records)',
  },
  'extra-resources': {
    type: 'string',
    value: 'LIST',
    description: `lists served besides jobs, job posts and tracking links, comma-separated, or none (default: all of ${EXTRA_RESOURCE_NAMES.join(', ')})`,
  },
  applications: {
    type: 'string',
    value: 'N',
    description:
      "records of applications (overrides --records); with --shape v3 the world's applications per account, from which the jobs (about one per 15 applications), job posts, tracking links and candidates not given explicitly derive",
  },
  candidates: {
    type: 'string',
    value: 'N',
    description: 'records of candidates (overrides --records)',
  },
  offers: { type: 'string', value: 'N', description: 'records of offers (overrides --records)' },
  departments: {
    type: 'string',
    value: 'N',
    description: 'records of departments (overrides --records)',
  },
  'rate-limit': {
    type: 'string',
    value: 'N/WINDOW',
    description:
      'fixed-window rate limit on list requests, e.g. 50/10s, or none (default: none; --shape v3: 75/30s)',
  },
  'rate-limit-headers': {
    type: 'boolean',
    description:
      'send X-RateLimit-Limit and X-RateLimit-Reset (seconds until reset; --shape v3: on, in epoch seconds) beside X-RateLimit-Remaining',
  },
  'token-ttl': {
    type: 'string',
    value: 'SECONDS',
    description: 'access token lifetime',
    default: '3600',
  },
  'expires-at': {
    type: 'boolean',
    description: 'state token lifetimes as expires_at instead of expires_in',
  },
  'revoke-previous-token': {
    type: 'boolean',
    description: 'minting a token revokes the previous one',
  },
  flat: {
    type: 'boolean',
    description: 'send tracking links flat (job_board_id, source_id, referrer_id)',
  },
  'malformed-every': {
    type: 'string',
    value: 'N',
    description: 'make every Nth record malformed; 0: none',
    default: '0',
  },
  'fault-rate': {
    type: 'string',
    value: 'P',
    description: 'probability of a 503 on a list request',
    default: '0',
  },
  latency: {
    type: 'string',
    value: 'MS',
    description: 'delay before every list response',
    default: '0',
  },
  'cache-pages': {
    type: 'boolean',
    description: 'serve a rendered page again while the data is unchanged (benchmarks)',
  },
  seed: { type: 'string', value: 'N', description: 'seed of the generated data', default: '1' },
  'client-id': {
    type: 'string',
    value: 'ID',
    description: 'client id of the client credentials grant',
    default: 'demo-client',
  },
  'client-secret': {
    type: 'string',
    value: 'SECRET',
    description: 'its client secret',
    default: 'demo-secret',
  },
  'api-key': {
    type: 'string',
    value: 'KEY',
    description: 'version 1/2 key for the transition endpoint',
    default: 'demo-api-key',
  },
  accounts: {
    type: 'string',
    value: 'N',
    description:
      'serve N more accounts acct001.. (client id acct001-client, secret acct001-secret, key acct001-api-key), each with its own data and rate limit',
    default: '0',
  },
  'account-records': {
    type: 'string',
    value: 'N',
    description: 'records per resource of each --accounts account',
    default: '20',
  },
  partner: {
    type: 'boolean',
    description:
      'print the partner app credentials and the authorize URL (authorization code grant; served either way)',
  },
  'partner-client-id': {
    type: 'string',
    value: 'ID',
    description: 'client id of the partner app (authorization code grant)',
    default: PARTNER_CLIENT_ID,
  },
  'partner-client-secret': {
    type: 'string',
    value: 'SECRET',
    description: 'its client secret',
    default: PARTNER_CLIENT_SECRET,
  },
  'partner-token-ttl': {
    type: 'string',
    value: 'SECONDS',
    description: 'lifetime of access tokens from the partner flow (default: --token-ttl)',
  },
  'refresh-token-ttl': {
    type: 'string',
    value: 'SECONDS',
    description: 'a refresh token unused this long is refused (invalid_grant)',
    default: '86400',
  },
  webhooks: {
    type: 'string',
    value: 'URL',
    description:
      "send the vendor's webhooks to URL (a worker's HIRESYNC_PUBLIC_URL/webhooks/default): every --webhook-every a candidate, job post or job of default's data is deleted, or a record updated, and the event sent, signed with --webhook-secret",
  },
  'webhook-secret': {
    type: 'string',
    value: 'SECRET',
    description:
      "the webhook secret the events are signed with (the worker's HIRESYNC_WEBHOOK_SECRET)",
  },
  'webhook-every': {
    type: 'string',
    value: 'SECONDS',
    description: 'time between two webhook events',
    default: '10',
  },
} as const satisfies OptionTable;

/** `hiresync simulate`: serves the built-in API simulator until SIGINT/SIGTERM. */
export const simulate = defineCommand({
  name: 'simulate',
  description: `Serves the built-in API simulator (tokens, lists, Link pagination, rate
    limits) on loopback with generated data, for demos, tests and benchmarks, until
    Ctrl-C (SIGINT) or SIGTERM.`,
  options,
  async execute(values, { stdout, signals }) {
    const shape = parseShape(values.shape);
    const host = values.host;
    if (!isLoopbackHost(host))
      throw new UsageError(
        `--host must be a loopback address (the simulator is for local use), got ${host}`,
      );
    const records = intOption('records', values.records);
    const count = (
      name:
        | 'jobs'
        | 'job-posts'
        | 'tracking-links'
        | 'applications'
        | 'candidates'
        | 'offers'
        | 'departments',
    ) => {
      const text = values[name];
      return text === undefined ? records : intOption(name, text);
    };
    const extraResources = parseExtraResources(values['extra-resources']);
    // Left undefined when not given, so that the shape decides.
    const flatTrackingLinks = values.flat;
    const malformedEvery = intOption('malformed-every', values['malformed-every']);
    // The v3 world sizes the lists it holds from its applications unless told otherwise.
    const worldCount = (name: 'jobs' | 'job-posts' | 'tracking-links' | 'candidates') =>
      shape === 'v3' && values[name] === undefined ? undefined : count(name);
    const simulatorOptions: SimulatorOptions = {
      shape,
      host: host === 'localhost' ? '127.0.0.1' : host,
      port: intOption('port', values.port),
      dataset: {
        counts: {
          jobs: worldCount('jobs'),
          job_posts: worldCount('job-posts'),
          tracking_links: worldCount('tracking-links'),
          applications: count('applications'),
          candidates: worldCount('candidates'),
          offers: count('offers'),
          departments: count('departments'),
        },
        seed: intOption('seed', values.seed),
        flatTrackingLinks,
        malformedEvery,
      },
      rateLimit:
        values['rate-limit'] === undefined
          ? undefined
          : values['rate-limit'].trim() === 'none'
            ? null
            : parseRateLimit(values['rate-limit']),
      rateLimitHeaders: values['rate-limit-headers'],
      tokenTtlSeconds: intOption('token-ttl', values['token-ttl'], 1),
      expiresField: values['expires-at'] ? 'expires_at' : undefined,
      revokePreviousToken: values['revoke-previous-token'] ?? false,
      latencyMs: intOption('latency', values.latency),
      cachePages: values['cache-pages'] ?? false,
      randomFaults: { serverError: probabilityOption('fault-rate', values['fault-rate']) },
      clientId: values['client-id'],
      clientSecrets: [values['client-secret']],
      apiKeys: [values['api-key']],
      partnerClientId: values['partner-client-id'],
      partnerClientSecrets: [values['partner-client-secret']],
      refreshTokenTtlSeconds: intOption('refresh-token-ttl', values['refresh-token-ttl'], 1),
      extraResources,
    };
    const partnerTtl = values['partner-token-ttl'];
    if (partnerTtl !== undefined)
      simulatorOptions.partnerAccessTokenTtlSeconds = intOption('partner-token-ttl', partnerTtl, 1);
    const accounts = simulatedAccounts(intOption('accounts', values.accounts), {
      records: intOption('account-records', values['account-records']),
      dataset: { flatTrackingLinks, malformedEvery, extraResources },
    });
    if (accounts.length > 0) simulatorOptions.accounts = accounts;
    const webhooks = values.webhooks;
    const webhookSecret = values['webhook-secret'];
    if (webhooks !== undefined && (webhookSecret ?? '') === '') {
      throw new UsageError(
        '--webhooks needs --webhook-secret, the secret the events are signed with',
      );
    }
    const webhookEveryMs = intOption('webhook-every', values['webhook-every'], 1) * 1000;
    const sim = await ApiSimulator.start(simulatorOptions);
    const feed =
      webhooks === undefined
        ? undefined
        : startWebhookFeed({
            dataset: sim.dataset,
            url: webhooks,
            secret: webhookSecret ?? '',
            everyMs: webhookEveryMs,
            onDelivery: (line) => stdout.write(`${line}\n`),
          });
    const accountLines = accounts.map(
      (a) =>
        `  account ${a.name}: HIRESYNC_CLIENT_ID=${a.clientId}  (secret: ${a.clientSecrets?.join(', ')}; api key: ${a.apiKeys?.join(', ')})\n`,
    );
    const partnerLines = values.partner
      ? [
          `  partner app: HIRESYNC_PARTNER_CLIENT_ID=${simulatorOptions.partnerClientId}  (secret: ${simulatorOptions.partnerClientSecrets?.join(', ')})\n`,
          `  HIRESYNC_AUTHORIZE_URL=${sim.authorizeUrl}  (approves at once for account default; add sim_account=NAME to the URL for another)\n`,
        ]
      : [];
    const extraPaths = sim.extraListPaths;
    const extraLines =
      extraPaths.length > 0 ? [`  more lists (extra resources): ${extraPaths.join(' ')}\n`] : [];
    const world = sim.dataset.world;
    const worldLines = world
      ? [
          `  v3 world: ${world.size('applications')} applications over ${sim.dataset.size('jobs')} jobs (advance it from code: dataset.advance()); lists: ${sim.worldListPaths.join(' ')}\n`,
        ]
      : [];
    stdout.write(
      `hiresync simulator listening on ${sim.url}\n` +
        `  HIRESYNC_BASE_URL=${sim.url}\n  HIRESYNC_AUTH_URL=${sim.authUrl}\n` +
        `  HIRESYNC_CLIENT_ID=${simulatorOptions.clientId}  (secret: the --client-secret given, default demo-secret)\n` +
        accountLines.join('') +
        partnerLines.join('') +
        extraLines.join('') +
        worldLines.join('') +
        shapeLine(shape, simulatorOptions.rateLimit) +
        (webhooks === undefined
          ? ''
          : `  webhooks: an event every ${webhookEveryMs / 1000}s to ${webhooks}\n`) +
        'Stop with Ctrl-C.\n',
    );
    await new Promise<void>((resolve) => {
      signals.once('SIGINT', resolve);
      signals.once('SIGTERM', resolve);
    });
    feed?.stop();
    await sim.close();
    return EXIT.ok;
  },
});

/** What `simulate` prints about a shape other than seed. */
function shapeLine(shape: SimulatorShape, rateLimit: SimulatorOptions['rateLimit']): string {
  if (shape === 'seed') return '';
  const window = rateLimit === null ? 'none' : (rateLimit ?? V3_RATE_LIMIT);
  const limit =
    window === 'none' ? 'no rate limit' : `${window.limit} requests / ${window.windowMs / 1000}s`;
  return (
    `  shape v3: the live service's shapes (flat tracking links, expires_at tokens, ${limit} with X-RateLimit-Reset in epoch seconds)\n` +
    `  HIRESYNC_API=v3  (the live service's recommended settings as defaults, as without HIRESYNC_BASE_URL)\n`
  );
}

/** The value of `--shape`: `seed` or `v3`. */
function parseShape(text: string): SimulatorShape {
  const shape = SIMULATOR_SHAPES.find((name) => name === text.trim());
  if (!shape)
    throw new UsageError(
      `--shape takes ${SIMULATOR_SHAPES.join(' or ')}, got ${JSON.stringify(text)}`,
    );
  return shape;
}

/** The value of `--extra-resources`: names of extra resources, `none`, or all when absent. */
function parseExtraResources(text: string | undefined): readonly string[] {
  if (text === undefined) return EXTRA_RESOURCE_NAMES;
  if (text.trim() === 'none') return [];
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const unknown = names.filter((name) => !EXTRA_RESOURCES.has(name));
  if (names.length === 0 || unknown.length > 0)
    throw new UsageError(
      `--extra-resources takes a comma-separated list of ${EXTRA_RESOURCE_NAMES.join(', ')}, or none; got ${JSON.stringify(text)}`,
    );
  return names;
}
