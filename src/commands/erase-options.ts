import { accountNameProblem, DEFAULT_ACCOUNT } from '../account-name.js';
import { formatDuration } from '../config/fields.js';
import { resourceNameProblem } from '../config/resource-names.js';
import { parseDuration } from '../duration.js';
import { UsageError } from '../errors.js';
import { RESOURCE_NAMES } from '../resources/index.js';
import type { OptionTable, OptionValues } from './options.js';

/** Options of `hiresync erase`. */
export const options = {
  account: {
    type: 'string',
    value: 'NAME',
    multiple: true,
    description:
      'the account whose records to erase: default (schema public) or a registered account (with --id: one; default default. With --deleted-before: repeat, or separate with commas; default every account)',
  },
  resource: {
    type: 'string',
    value: 'NAME',
    multiple: true,
    description:
      'the resource of the records (jobs, tracking_links, a list resource such as candidates, …) (with --id: one, required. With --deleted-before: repeat, or separate with commas; default every resource)',
  },
  id: {
    type: 'string',
    value: 'N',
    multiple: true,
    description: 'the id of a record to erase; repeat, or separate with commas',
  },
  note: {
    type: 'string',
    value: 'TEXT',
    description:
      "why, kept in hiresync.erasures beside each id (a ticket or request number; never the person's data)",
  },
  'deleted-before': {
    type: 'string',
    value: 'D',
    description:
      'instead of --id: erase the records deleted upstream longer ago than D (e.g. 30d), as HIRESYNC_ERASE_DELETED_AFTER does daily',
  },
  wait: {
    type: 'string',
    value: 'D',
    default: '1m',
    description:
      'how long to wait for a sync run of the resource in progress to end (a run holds its resource until it ends), from 1s to 1h',
  },
} as const satisfies OptionTable;

/** What `hiresync erase` is asked to do, read from its options before anything connects. */
export type EraseRequest =
  | {
      mode: 'ids';
      account: string;
      resource: string;
      /** Distinct ids, as decimal text (ids may pass 2^53). */
      ids: string[];
      note: string | null;
      waitMs: number;
    }
  | {
      mode: 'deleted';
      /** Undefined: every account. */
      accounts: string[] | undefined;
      /** Undefined: every resource of each account. */
      resources: string[] | undefined;
      /** Records deleted longer ago than this. */
      afterMs: number;
      note: string | null;
      waitMs: number;
    };

/** Largest bigint: API ids are bigint. */
const MAX_ID = 2n ** 63n - 1n;

/** Longest operator note kept. */
const MAX_NOTE = 500;

/** Bounds of --deleted-before (those of HIRESYNC_ERASE_DELETED_AFTER), and an example. */
const DELETED_BEFORE = [3_600_000, 3650 * 86_400_000, '30d'] as const;

/** Bounds of --wait, and an example. */
const WAIT = [1000, 3_600_000, '5m'] as const;

/** Values of a repeatable option, also comma-separated, trimmed; undefined when not given. */
function listOf(name: string, values: readonly string[] | undefined): string[] | undefined {
  if (!values || values.length === 0) return undefined;
  const items = values.flatMap((v) => v.split(',')).map((v) => v.trim());
  if (items.some((item) => item === '')) throw new UsageError(`--${name} was given an empty value`);
  return [...new Set(items)];
}

/** A record id as decimal text: digits within bigint; a UsageError otherwise. */
export function parseRecordId(text: string): string {
  const digits = /^\d+$/.test(text) ? BigInt(text) : undefined;
  if (digits === undefined || digits > MAX_ID) {
    throw new UsageError(
      `--id takes a record id (a whole number, as the API's ids are), got ${JSON.stringify(text)}; nothing was erased`,
    );
  }
  return digits.toString();
}

function checkResource(name: string): string {
  const problem = RESOURCE_NAMES.includes(name) ? undefined : resourceNameProblem(name);
  if (problem) throw new UsageError(`--resource: ${problem}`);
  return name;
}

function checkAccount(name: string): string {
  const problem = name === DEFAULT_ACCOUNT ? undefined : accountNameProblem(name);
  if (problem) throw new UsageError(`--account: ${problem}`);
  return name;
}

/** A duration option within [min, max]; a UsageError naming the option otherwise. */
function durationOption(
  name: string,
  text: string,
  [min, max, example]: readonly [number, number, string],
): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms < min || ms > max) {
    throw new UsageError(
      `--${name} takes a duration from ${formatDuration(min)} to ${formatDuration(max)} (such as ${example}), got ${JSON.stringify(text)}`,
    );
  }
  return ms;
}

/**
 * Reads the options of `hiresync erase` into a request, before anything
 * connects: every mistake (no record named, a bad id, a name that cannot be
 * an account or a resource, --id beside --deleted-before) is a UsageError
 * (exit 2). Whether the account and resource exist is known once connected.
 */
export function parseEraseRequest(values: OptionValues<typeof options>): EraseRequest {
  const accounts = listOf('account', values.account)?.map(checkAccount);
  const resources = listOf('resource', values.resource)?.map(checkResource);
  const ids = listOf('id', values.id);
  const note = values.note?.trim() || null;
  if (note !== null && note.length > MAX_NOTE) {
    throw new UsageError(`--note takes at most ${MAX_NOTE} characters, got ${note.length}`);
  }
  const waitMs = durationOption('wait', values.wait, WAIT);
  const deleted = values['deleted-before'];
  if (deleted !== undefined) {
    if (ids) {
      throw new UsageError(
        '--deleted-before erases every record deleted upstream before then; --id names records: give one or the other',
      );
    }
    const afterMs = durationOption('deleted-before', deleted, DELETED_BEFORE);
    return { mode: 'deleted', accounts, resources, afterMs, note, waitMs };
  }
  if (!ids) {
    throw new UsageError(
      'name the records to erase: --resource NAME --id N [--id N]... (or --deleted-before D for the records deleted upstream before then)',
    );
  }
  const [resource, ...moreResources] = resources ?? [];
  if (resource === undefined) {
    throw new UsageError('--id needs --resource NAME: the resource whose records these ids are');
  }
  if (moreResources.length > 0) {
    throw new UsageError(
      `--id takes one --resource (ids are per resource), got ${resources?.join(', ')}: erase each resource's records on their own`,
    );
  }
  const [account = DEFAULT_ACCOUNT, ...moreAccounts] = accounts ?? [];
  if (moreAccounts.length > 0) {
    throw new UsageError(
      `--id takes one --account (ids are per account), got ${accounts?.join(', ')}: erase each account's records on their own`,
    );
  }
  return {
    mode: 'ids',
    account,
    resource,
    ids: [...new Set(ids.map(parseRecordId))],
    note,
    waitMs,
  };
}
