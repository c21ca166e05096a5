import type { CommandEntry } from './command.js';

/**
 * Every hiresync command, in the order `hiresync --help` lists them. Each
 * module is imported when its command runs: a command loads only its own
 * graph (`status` no BullMQ, got or prom-client; `accounts add` none of
 * those nor ioredis), and `--version` or `--help` none.
 */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'migrate',
    summary: 'apply pending database migrations (needs DATABASE_URL)',
    load: async () => (await import('./migrate.js')).migrate,
  },
  {
    name: 'sync',
    summary: 'run each resource once, to the end, and print a summary',
    load: async () => (await import('./sync.js')).sync,
  },
  {
    name: 'worker',
    summary: 'run forever: queued runs, schedules, /healthz and /metrics',
    load: async () => (await import('./worker.js')).worker,
  },
  {
    name: 'status',
    summary: "show each account's and resource's last run, run in flight and checkpoint",
    load: async () => (await import('./status.js')).status,
  },
  {
    name: 'accounts',
    summary:
      'register, update, test, authorize, invite, list, disable, enable and remove accounts (customers)',
    load: async () => (await import('./accounts/index.js')).accounts,
  },
  {
    name: 'erase',
    summary:
      'erase records of an account, history and rejected records included, logged in hiresync.erasures',
    load: async () => (await import('./erase.js')).erase,
  },
  {
    name: 'reapply-policy',
    summary:
      'rewrite what is stored, history and rejected records included, to match HIRESYNC_FIELD_POLICY',
    load: async () => (await import('./reapply-policy.js')).reapplyPolicy,
  },
  {
    name: 'simulate',
    summary: 'serve the built-in API simulator on loopback',
    load: async () => (await import('./simulate.js')).simulate,
  },
  {
    name: 'demo',
    summary: 'the main job on built-in defaults: simulator, migrate, sync, example queries',
    load: async () => (await import('./demo.js')).demo,
  },
];
