import { type Kysely, sql, type Transaction } from 'kysely';
import { DEFAULT_ACCOUNT, runKey, schemaOf } from '../../account-name.js';
import type { RecordPolicy } from '../../privacy/police-page.js';
import type {
  CompletedRuns,
  Page,
  PageWriteOptions,
  PageWriteResult,
  PreparedPage,
  ResourceName,
  RunMode,
  RunStore,
  RunTotals,
  TypedViewRefresh,
} from '../../sync/ports.js';
import type { StoredResource } from '../pages/page-statement.js';
import { writePageAfter } from '../pages/pipelined-page.js';
import { type PageVerdict, validatePage, writePage } from '../pages/write-page.js';
import type { Database } from '../tables.js';
import { refreshTypedView } from '../typed-views/refresh-typed-view.js';
import type { ResourceLock } from './resource-lock.js';
import {
  completedRuns,
  completeRun,
  createRun,
  finishRun,
  getRun,
  resetRunProgress,
  sweepDeletions,
} from './sync-runs.js';

/** A page as this store writes it: under the field policy, and validated. */
interface StoredPage extends PageVerdict {
  /** The page it was made of (a verdict is used only for its own page). */
  readonly of: Page;
  /** The body to store: the page's, with the field policy applied. */
  readonly body: string;
  /** Its records, for validation and the unchanged-record check. */
  readonly records: readonly unknown[];
}

/** A verdict this store made (preparePage), as the page written beside it needs it. */
function isVerdict(prepared: PreparedPage | undefined): prepared is PageVerdict {
  return (
    prepared !== undefined && typeof (prepared as Partial<PageVerdict>).distinctIds === 'boolean'
  );
}

function isStoredPage(prepared: PreparedPage | undefined, page: Page): prepared is StoredPage {
  return prepared !== undefined && (prepared as Partial<StoredPage>).of === page;
}

/** The sync engine's view of the warehouse, over Kysely. */
/** Options of {@link KyselyRunStore}. */
export interface KyselyRunStoreOptions {
  /** The resources this store writes, by name. */
  resources: ReadonlyMap<ResourceName, StoredResource>;
  /** Property of an object body that holds the records; undefined: the body is the array. */
  recordsKey?: string | undefined;
  /** The deletion guard: most of a resource's live rows one sweep may mark. Default 0.5. */
  maxDeleteFraction?: number;
  /** Keep a version of every record that changes in its history table (HIRESYNC_HISTORY). Default true. */
  history?: boolean;
  /**
   * Makes the tables of list resource `name` in every schema (see
   * ensureListResources); called when a run starts on a resource whose
   * tables this schema lacks.
   */
  ensureListResource?: (name: string) => Promise<void>;
  /**
   * The pool behind `db` when `db` is a run's locked session (set by
   * {@link KyselyRunStore.over}): the typed view's refresh takes its own
   * connections from it, never the session that holds the run's lock.
   */
  root?: Kysely<Database>;
  /** When given, a sweep runs only while its run holds the resource's Postgres lock. */
  resourceLock?: ResourceLock;
  /**
   * `db` is the connection that holds the run's Postgres lock (see
   * {@link KyselyRunStore.over}): a write committed on it was made under the
   * lock, and needs no look at pg_locks first.
   */
  holdsLock?: boolean;
  /**
   * The account whose rows this store reads and writes: bound in every
   * statement (its locks are named by account and resource too). Default
   * `default`.
   */
  account?: string;
  /**
   * Runs in every page and sweep transaction, after the lock check; throws to
   * keep the transaction from committing (the account was disabled, removed
   * or changed while its run was in flight).
   */
  assertWritable?: (trx: Transaction<Database>) => Promise<void>;
  /**
   * HIRESYNC_FIELD_POLICY: applied to every page before anything of it is
   * validated or written, so rows, raw/data, history, rejected records and
   * typed views only ever see its result.
   */
  fieldPolicy?: RecordPolicy | undefined;
}

export class KyselyRunStore implements RunStore {
  readonly #db: Kysely<Database>;
  readonly #options: KyselyRunStoreOptions;
  readonly #account: string;
  /** Writes on the session (holdsLock), in hand or waiting for it: a page written beside them takes another connection. */
  #sessionUsers = 0;
  /** Settles when the last write on the session so far has ended. */
  #sessionFree: Promise<void> = Promise.resolve();

  constructor(db: Kysely<Database>, options: KyselyRunStoreOptions) {
    this.#db = db;
    this.#options = options;
    this.#account = options.account ?? DEFAULT_ACCOUNT;
  }

  /**
   * This store over `session`, the connection that holds a run's Postgres
   * lock (HeldResourceLock.session): the run's statements then take no
   * connection each, and its writes no pg_locks check (the lock is held as
   * long as the connection lives).
   */
  over(session: Kysely<Database>): KyselyRunStore {
    return new KyselyRunStore(session, {
      ...this.#options,
      root: this.#options.root ?? this.#db,
      holdsLock: true,
    });
  }

  async createRun(run: {
    resource: ResourceName;
    mode: RunMode;
    filter?: string | undefined;
  }): Promise<string> {
    const stored = this.#resource(run.resource);
    if (stored.onDemand) await this.#ensureTables(stored);
    return createRun(this.#db, this.#account, run);
  }

  /**
   * Makes a list resource's tables when the account's schema lacks its view
   * (a name new to HIRESYNC_RESOURCES).
   */
  async #ensureTables(stored: StoredResource): Promise<void> {
    const { rows } = await sql<{ present: boolean }>`
      select to_regclass(format('%I.%I', ${schemaOf(this.#account)}::text, ${stored.table}::text))
        is not null as present`.execute(this.#db);
    if (rows[0]?.present) return;
    if (!this.#options.ensureListResource) {
      throw new Error(`table ${stored.table} of resource ${stored.name} does not exist`);
    }
    await this.#options.ensureListResource(stored.name);
  }

  async runOutcome(runId: string): Promise<'running' | 'succeeded' | 'failed' | undefined> {
    return (await getRun(this.#db, this.#account, runId))?.outcome;
  }

  completedRuns(
    resource: ResourceName,
    updated?: { lookbackMs: number; filterPrefix: string },
  ): Promise<CompletedRuns> {
    return completedRuns(this.#db, this.#account, resource, updated);
  }

  preparePage(resource: ResourceName, page: Page): StoredPage {
    // The page's records are policed in place (see RecordPolicy.page).
    const policed = this.#options.fieldPolicy?.page(
      resource,
      page.body,
      this.#options.recordsKey,
      page.records,
    );
    const { body, records } = policed ?? page;
    return { ...validatePage(this.#resource(resource), records), of: page, body, records };
  }

  async writePage(
    resource: ResourceName,
    runId: string,
    page: Page,
    prepared?: PreparedPage,
    options: PageWriteOptions = {},
  ): Promise<PageWriteResult> {
    // Made for this page while the one before it was written (see preparePage), else made now.
    const stored = isStoredPage(prepared, page) ? prepared : this.preparePage(resource, page);
    const { earlier } = options;
    const { holdsLock, root, resourceLock } = this.#options;
    // The run's session serves one transaction at a time: a page written
    // while another is on it goes through a pooled connection, which checks
    // the run's lock (and holds its fence: see runFenceKey) before it writes
    // anything it commits; without a lock to check there, it waits for the session.
    const elsewhere =
      earlier !== undefined && holdsLock === true && this.#sessionUsers > 0 && !!resourceLock;
    const db = elsewhere ? (root ?? this.#db) : this.#db;
    const toWrite = {
      account: this.#account,
      resource: this.#resource(resource),
      runId,
      pageNumber: page.number,
      body: stored.body,
      records: stored.records,
      recordsKey: this.#options.recordsKey,
      assertLocked: this.#assertLocked(resource, elsewhere),
      history: this.#options.history,
      skipUnchanged: options.skipUnchanged,
      apiClock: options.apiClock,
    };
    const write = () =>
      earlier === undefined
        ? writePage(db, toWrite, stored)
        : writePageAfter(db, toWrite, stored, {
            committed: earlier.committed,
            verdict: isVerdict(earlier.prepared) ? earlier.prepared : undefined,
          });
    return holdsLock === true && !elsewhere ? this.#onSession(write) : write();
  }

  /** Runs `write` on the run's session once no other write is on it, in call order. */
  async #onSession<T>(write: () => Promise<T>): Promise<T> {
    const before = this.#sessionFree;
    let free!: () => void;
    this.#sessionFree = new Promise<void>((resolve) => {
      free = resolve;
    });
    this.#sessionUsers += 1;
    try {
      await before;
      return await write();
    } finally {
      this.#sessionUsers -= 1;
      free();
    }
  }

  resetProgress(runId: string): Promise<void> {
    return resetRunProgress(this.#db, this.#account, runId);
  }

  /**
   * The checks of a resource's writes: its lock, when this store runs under
   * resource locks (on the lock's own session, none: see over), and assertWritable.
   * `elsewhere`: the write goes through another connection than the session.
   */
  #assertLocked(resource: ResourceName, elsewhere = false) {
    const { resourceLock, assertWritable, holdsLock } = this.#options;
    const lock = holdsLock && !elsewhere ? undefined : resourceLock;
    const name = runKey(this.#account, resource);
    if (!lock && !assertWritable) return undefined;
    return async (trx: Transaction<Database>) => {
      await lock?.assertHeld(name, trx);
      await assertWritable?.(trx);
    };
  }

  #resource(name: ResourceName): StoredResource {
    const resource = this.#options.resources.get(name);
    if (!resource) throw new Error(`no declaration for resource ${JSON.stringify(name)}`);
    return resource;
  }

  sweepDeletions(
    resource: ResourceName,
    runId: string,
    options: { allowMassDelete?: boolean } = {},
  ): Promise<number> {
    const stored = this.#resource(resource);
    if (!stored.sweeps) return Promise.resolve(0);
    return sweepDeletions(this.#db, this.#account, runId, {
      table: stored.table,
      maxDeleteFraction: this.#options.maxDeleteFraction,
      allowMassDelete: options.allowMassDelete,
      assertLocked: this.#assertLocked(resource),
      history: this.#options.history === false ? undefined : stored,
      hint: { account: this.#options.account, pathVariable: stored.pathVariable },
    });
  }

  async refreshTypedView(
    resource: ResourceName,
    runId: string,
  ): Promise<TypedViewRefresh | undefined> {
    const stored = this.#resource(resource);
    if (stored.typedView === undefined) return undefined;
    return refreshTypedView(
      this.#options.root ?? this.#db,
      {
        view: stored.typedView,
        table: stored.table,
        account: this.#account,
        columns: stored.columns,
      },
      runId,
    );
  }

  finishRun(runId: string, outcome: { outcome: 'failed'; error: string }): Promise<void> {
    return finishRun(this.#db, this.#account, runId, outcome);
  }

  completeRun(resource: ResourceName, runId: string): Promise<RunTotals> {
    return completeRun(this.#db, this.#account, runId, this.#resource(resource).table);
  }
}
