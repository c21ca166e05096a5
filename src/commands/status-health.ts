import { ageText } from '../status/liveness.js';
import type { StatusReport } from '../status/report-types.js';
import { formatTable } from './format-table.js';

/** `2024-05-01 12:00:05` (UTC) of an ISO timestamp. */
function second(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

/** The workers line: those alive (host:pid, last seen), the last seen when none is, or none ever. */
function workersLine(report: StatusReport): string {
  const workers = report.workers;
  if (!workers) return 'workers: unknown';
  if (!workers.ran) {
    return "workers: none has run in this deployment (it syncs from cron, or not yet); 'hiresync worker' keeps the schedules";
  }
  const now = Date.parse(report.generatedAt);
  const seen = (w: { lastSeen: string }) =>
    `seen ${ageText(Math.max(0, now - Date.parse(w.lastSeen)))} ago`;
  if (workers.alive.length === 0) {
    const last = workers.lastSeen;
    return `workers: none alive${last ? `; last seen ${last.host}:${last.pid} at ${second(last.lastSeen)} UTC` : ''}`;
  }
  const list = workers.alive.map((w) => `${w.host}:${w.pid} (${seen(w)})`).join(', ');
  return `workers: ${workers.alive.length} alive: ${list}`;
}

/** The run queue's jobs by state (waiting counts BullMQ's prioritized jobs). */
function queueLine(report: StatusReport): string {
  const q = report.queue;
  if (!q) return 'queue: unknown';
  return `queue: ${q.waiting + q.prioritized} waiting, ${q.active} active, ${q.delayed} delayed, ${q.failed} failed`;
}

/** Each shown resource's next scheduled run, soonest first. */
function nextRuns(report: StatusReport) {
  return report.accounts
    .flatMap((a) =>
      a.resources.flatMap((r) =>
        r.nextRun ? [{ account: a.name, resource: r.resource, ...r.nextRun }] : [],
      ),
    )
    .sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : 0));
}

/**
 * What `status` prints below its table: the workers alive, the run queue's
 * jobs by state, and the next scheduled runs; `perResource` (the layout of
 * one line per account and resource) lists each resource's, the others the
 * soonest one.
 */
export function formatHealth(report: StatusReport, perResource: boolean): string {
  const runs = nextRuns(report);
  const first = runs[0];
  const lines = [workersLine(report), queueLine(report)];
  if (!first) {
    lines.push('next run: none scheduled (no worker keeps the schedules)');
  } else if (!perResource) {
    lines.push(
      `next run: ${first.account}/${first.resource} ${first.mode} at ${second(first.at)} UTC (${runs.length} scheduled; 'hiresync status --json' gives each resource's nextRun)`,
    );
  } else {
    lines.push(
      '',
      'next scheduled runs',
      formatTable(
        ['account', 'resource', 'mode', 'next run (UTC)'],
        runs.map((r) => [r.account, r.resource, r.mode, second(r.at)]),
      ),
    );
  }
  return lines.join('\n');
}
