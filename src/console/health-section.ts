import type { StatusReport } from '../status/report-types.js';
import { html, type SafeHtml } from './html.js';
import { when } from './when.js';

/** How many of the next scheduled runs the section lists (the soonest). */
export const NEXT_RUNS_SHOWN = 20;

/** What the check says of the workers: the `no_worker` problem, when it fails. */
function workersLine(report: StatusReport): SafeHtml {
  const workers = report.workers;
  if (!workers) return html``;
  const stale = report.check.problems.find((p) => p.kind === 'no_worker');
  if (stale)
    return html`<div class="problem" data-health="no-worker"><p class="what">${stale.message}</p></div>`;
  if (!workers.ran) {
    return html`<p class="meta" data-health="no-worker-ever">No worker has run in this deployment (it syncs from cron, or not yet): <code>hiresync worker</code> keeps the schedules.</p>`;
  }
  const alive = workers.alive;
  return html`<p class="meta" data-health="workers">${alive.length} ${alive.length === 1 ? 'worker' : 'workers'} alive${
    alive.length === 0 && workers.lastSeen
      ? html` · last seen ${workers.lastSeen.host}:${workers.lastSeen.pid} at ${when(workers.lastSeen.lastSeen)}`
      : ''
  }</p>
${
  alive.length > 0 &&
  html`<table class="workers">
<thead><tr><th>host</th><th class="num">pid</th><th>version</th><th>started</th><th>last seen</th></tr></thead>
<tbody>${alive.map((w) => html`<tr><td>${w.host}</td><td class="num">${w.pid}</td><td>${w.version}</td><td>${when(w.startedAt)}</td><td>${when(w.lastSeen)}</td></tr>`)}</tbody>
</table>`
}`;
}

/** The run queue's jobs by state, those at 0 included (a queue that does not drain shows in `waiting`). */
function queueLine(report: StatusReport): SafeHtml {
  const q = report.queue;
  if (!q) return html``;
  return html`<p class="meta" data-health="queue">Run queue: ${q.waiting + q.prioritized} waiting · ${q.active} active · ${q.delayed} delayed · ${q.failed} failed</p>`;
}

/** The soonest scheduled runs of every account and resource. */
function nextRuns(report: StatusReport): SafeHtml {
  const runs = report.accounts
    .flatMap((a) =>
      a.resources.flatMap((r) =>
        r.nextRun ? [{ where: `${a.name}/${r.resource}`, ...r.nextRun }] : [],
      ),
    )
    .sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : 0));
  if (runs.length === 0) {
    return html`<p class="meta" data-health="next-runs">No scheduled run: no worker keeps the schedules.</p>`;
  }
  const more = runs.length - NEXT_RUNS_SHOWN;
  return html`<details data-health="next-runs"><summary>Next scheduled run: ${runs[0]?.where} (${runs[0]?.mode}) at ${when(runs[0]?.at)}</summary>
<table>
<thead><tr><th>resource</th><th>mode</th><th>next run</th></tr></thead>
<tbody>${runs.slice(0, NEXT_RUNS_SHOWN).map((r) => html`<tr><td>${r.where}</td><td>${r.mode}</td><td>${when(r.at)}</td></tr>`)}</tbody>
</table>
${more > 0 && html`<p class="meta">and ${more} more: <code>hiresync status --json</code> gives each resource's <code>nextRun</code>.</p>`}
</details>`;
}

/**
 * The console's health section: the workers alive (host, pid, last seen),
 * or the check's finding that none was seen within its max age; the run
 * queue's jobs by state; the soonest scheduled runs. What `status` prints
 * below its table, from the same report.
 */
export function healthSection(report: StatusReport): SafeHtml {
  return html`<section class="health" id="health">
<h2>Workers and queue</h2>
${workersLine(report)}
${queueLine(report)}
${nextRuns(report)}
</section>`;
}
