import type {
  AccountReport,
  ResourceReport,
  ResourceState,
  RunReport,
} from '../status/report-types.js';
import { stateThatCaused } from '../status/state-caused.js';
import { html, type SafeHtml } from './html.js';
import { when } from './when.js';

const STATE: Readonly<Record<ResourceState, { label: string; badge: string }>> = {
  succeeded: { label: 'succeeded', badge: 'ok' },
  failed: { label: 'failed', badge: 'bad' },
  not_permitted: { label: 'not permitted', badge: 'bad' },
  running: { label: 'running', badge: 'warn' },
  never_run: { label: 'never run', badge: '' },
};

function runCell(run: RunReport | null): SafeHtml {
  if (!run) return html`<span class="empty">–</span>`;
  const started = when(run.startedAt) ?? '';
  // Finished the day it started: the time says enough.
  const finished = when(run.finishedAt)?.replace(started.slice(0, 11), '');
  return html`${run.mode} · ${started}${finished ? html`<br><span class="progress">finished ${finished}</span>` : ''}`;
}

/** A run in flight: its progress, or where an interrupted run resumes. */
function progressCell(resource: ResourceReport): SafeHtml {
  const flight = resource.inFlight;
  if (flight) {
    return html`<span class="progress">${flight.mode} run ${flight.runId} ${flight.active ? 'in flight' : 'interrupted'}: ${flight.pages} ${flight.pages === 1 ? 'page' : 'pages'}, ${flight.records} records so far${flight.active ? '' : '; resumes from its checkpoint when a worker takes it'}</span>`;
  }
  const checkpoint = resource.checkpoint;
  if (checkpoint) {
    return html`<span class="progress">checkpoint of ${checkpoint.mode} run ${checkpoint.runId}: resumes at page ${checkpoint.pagesDone + 1}</span>`;
  }
  return html`<span class="empty">–</span>`;
}

/**
 * The table of an account's resources: state, last run, its counts, last
 * success, a run in flight, and each row's `syncNow` button when given.
 */
export function resourceTable(
  resources: readonly ResourceReport[],
  syncNow?: (resource: ResourceReport) => SafeHtml | undefined,
): SafeHtml {
  if (resources.length === 0) return html`<p class="empty">No resource.</p>`;
  return html`<table>
<colgroup><col class="resource"><col class="state"><col class="run"><col class="count"><col class="count"><col class="success"><col class="flight">${syncNow && html`<col class="act">`}</colgroup>
<thead><tr><th>resource</th><th>state</th><th>last run</th><th class="num">pages</th><th class="num">records</th><th>last success</th><th>in flight</th>${syncNow && html`<th></th>`}</tr></thead>
<tbody>
${resources.map(
  (r) => html`<tr>
<td>${r.resource}</td>
<td><span class="badge ${STATE[r.state].badge}">${STATE[r.state].label}</span></td>
<td>${runCell(r.lastRun)}</td>
<td class="num">${r.lastRun?.pages ?? '–'}</td>
<td class="num">${r.lastRun?.records ?? '–'}</td>
<td>${when(r.lastSuccess?.finishedAt) ?? html`<span class="empty">never</span>`}</td>
<td>${progressCell(r)}</td>
${syncNow && html`<td>${syncNow(r)}</td>`}
</tr>
`,
)}</tbody>
</table>`;
}

/** The resources of `account` whose last run failed because of its state (src/status/state-caused.ts). */
function causedByState(account: AccountReport): Set<string> {
  return new Set(
    account.resources
      .filter((r) => stateThatCaused(account.name, account.state, r.error) !== undefined)
      .map((r) => r.resource),
  );
}

/**
 * The errors of the resources that failed because of the account's state,
 * told once: a line naming them, their errors folded under it (a
 * `<details>`, which opens without a script).
 */
export function foldedProblems(account: AccountReport): SafeHtml | undefined {
  const caused = causedByState(account);
  if (caused.size === 0) return undefined;
  return html`<details class="folded">
<summary>${caused.size} ${caused.size === 1 ? 'resource' : 'resources'} failed because of it: ${[...caused].join(', ')}</summary>
${resourceErrors(
  account,
  account.resources.filter((r) => caused.has(r.resource)),
)}
</details>`;
}

/**
 * Below the table: per resource that has one, its error and what to do,
 * its last successful run's warnings, and a clock-skew note. The errors its
 * account's state caused are {@link foldedProblems}'.
 */
export function resourceProblems(account: AccountReport): SafeHtml {
  const caused = causedByState(account);
  return resourceErrors(
    account,
    account.resources.filter((r) => !caused.has(r.resource)),
  );
}

function resourceErrors(account: AccountReport, resources: readonly ResourceReport[]): SafeHtml {
  return html`${resources.map((r) => {
    const action = r.action;
    return html`${
      r.error &&
      html`<div class="problem" data-resource="${r.resource}">
<p class="what">${r.resource}: ${r.error}</p>
${action && html`<p>What to do: ${action}</p>`}
</div>`
    }${
      !r.error &&
      r.action &&
      // An account to re-authorize says what to do once, above the table.
      r.action !== account.reauthorization?.action &&
      r.action !== account.credentialsRefused?.action &&
      html`<div class="problem warn" data-resource="${r.resource}"><p class="what">${r.resource}: ${r.state.replaceAll('_', ' ')}</p><p>What to do: ${r.action}</p></div>`
    }${
      r.lastSuccess?.warnings &&
      html`<div class="problem warn"><p class="what">${r.resource}: the last successful run could not do everything</p><p>${r.lastSuccess.warnings}</p></div>`
    }${r.clockSkew && html`<div class="problem warn"><p>${r.resource}: ${r.clockSkew.note}</p></div>`}`;
  })}`;
}
