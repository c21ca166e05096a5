import type { RelationReport } from '../warehouse/upkeep/policy-reapply.js';
import type { RelationId } from '../warehouse/upkeep/reapply-progress.js';
import type { PassProgress } from '../warehouse/upkeep/reapply-relation.js';
import type { Output } from './command.js';

/** `N thing(s)`. */
function count(n: number, thing: string): string {
  return `${n} ${thing}${n === 1 ? '' : 's'}`;
}

const nameOf = (id: RelationId) => `${id.account}/${id.resource}/${id.relation}`;

/** Shortest time between two progress lines of a relation. */
const PROGRESS_EVERY_MS = 2000;

/**
 * What reapply-policy prints for people: a line when a relation resumes, a
 * progress line at most every 2 s while a pass runs, a line per relation
 * done, skipped or absent, and a summary. Counts only: never a value.
 */
export class ReapplyReport {
  readonly #out: Output;
  readonly #now: () => number;
  readonly #startedAt: number;
  #lastLine = 0;
  #relations = 0;
  #already = 0;
  #read = 0;
  #rewritten = 0;
  #late = 0;
  readonly #accounts = new Set<string>();
  readonly #resources = new Set<string>();

  constructor(out: Output, now: () => number = Date.now) {
    this.#out = out;
    this.#now = now;
    this.#startedAt = now();
  }

  /** Rows written during the passes under another policy (see PassOutcome.late). */
  get late(): number {
    return this.#late;
  }

  start(report: RelationReport): void {
    this.#lastLine = this.#now();
    if (!report.resumed) return;
    this.#out.write(
      `${nameOf(report)}: continuing a pass stopped after ${count(report.readBefore, 'row')} read (same policy)\n`,
    );
  }

  batch(id: RelationId, progress: PassProgress): void {
    const now = this.#now();
    if (now - this.#lastLine < PROGRESS_EVERY_MS) return;
    this.#lastLine = now;
    this.#out.write(
      `${nameOf(id)}: ${progress.read} of ${progress.total} rows read, ${progress.rewritten} rewritten…\n`,
    );
  }

  done(report: RelationReport): void {
    this.#accounts.add(report.account);
    this.#resources.add(report.resource);
    if (report.status === 'absent') {
      this.#out.write(`${nameOf(report)}: not in this account's schema: nothing stored\n`);
      return;
    }
    if (report.status === 'caught up') {
      this.#relations += 1;
      this.#rewritten += report.late;
      this.#late += report.late;
      this.#out.write(
        `${nameOf(report)}: ${count(report.late, 'row')} written since the last pass by a run under another policy, rewritten\n`,
      );
      return;
    }
    if (report.status === 'already applied') {
      this.#already += 1;
      this.#out.write(
        `${nameOf(report)}: already applied (${count(report.read, 'row')} read, ${report.rewritten} rewritten under this policy)\n`,
      );
      return;
    }
    this.#relations += 1;
    this.#read += report.read - report.readBefore;
    this.#rewritten += report.rewritten;
    this.#late += report.late;
    const late =
      report.late > 0
        ? `; ${count(report.late, 'row')} written meanwhile by a run under another policy, rewritten`
        : '';
    this.#out.write(
      `${nameOf(report)}: ${count(report.read, 'row')} read, ${report.rewritten} rewritten${late}\n`,
    );
  }

  /** A resource of the policy that an account never stored. */
  nothingStored(account: string, resource: string): void {
    this.#accounts.add(account);
    this.#out.write(`${account}/${resource}: nothing stored\n`);
  }

  summary(): void {
    const seconds = (this.#now() - this.#startedAt) / 1000;
    const rate = seconds > 0 ? `, ${Math.round(this.#read / seconds)} rows/s` : '';
    this.#out.write(
      `reapply-policy: ${count(this.#accounts.size, 'account')}, ${count(this.#resources.size, 'resource')}: ${count(this.#relations, 'relation')} rewritten (${count(this.#read, 'row')} read, ${this.#rewritten} rewritten), ${this.#already} already applied, in ${seconds.toFixed(1)} s${rate}\n`,
    );
  }
}
