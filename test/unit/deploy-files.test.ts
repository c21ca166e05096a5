import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { METRIC_LABEL_VALUES } from '../../src/status/metric-label-values.js';
import { Metrics } from '../../src/status/metrics.js';
import { registerWorkerSeries } from '../../src/status/worker-series.js';
import type { Database } from '../../src/warehouse/tables.js';

/** How the dashboard names its data source: Grafana's `${datasource}` variable. */
const DATASOURCE_VARIABLE = ['$', '{datasource}'].join('');

const RULES_PATH = new URL('../../deploy/prometheus-rules.yml', import.meta.url);
const DASHBOARD_PATH = new URL('../../deploy/grafana-dashboard.json', import.meta.url);

/** What a series name of /metrics is: the metric it belongs to and the labels it can carry. */
interface ExportedSeries {
  /** The metric's own name (a summary's, for its `_count`). */
  metric: string;
  labels: Set<string>;
}

/** Labels Prometheus adds to every series it scrapes. */
const TARGET_LABELS = ['job', 'instance'];

/**
 * Every series name a worker's /metrics can hold, with its labels: the
 * registry of a real Metrics with everything on (Node's metrics, Postgres and
 * queue series), with the series names a histogram or summary adds to its own.
 */
function exportedSeries(): Map<string, ExportedSeries> {
  const metrics = new Metrics({
    defaultMetrics: true,
    // Only registered here, never read: no scrape is made.
    db: {} as Kysely<Database>,
    queue: { getJobCounts: async () => ({}) },
  });
  // As createApp registers them beside the others.
  registerWorkerSeries(metrics.registry, async () => ({ nowMs: 0, workers: [] }));
  const series = new Map<string, ExportedSeries>();
  for (const m of metrics.registry.getMetricsAsArray()) {
    const {
      name,
      type,
      labelNames = [],
    } = m as unknown as {
      name: string;
      type: string;
      labelNames?: string[];
    };
    const percentiles = (m as unknown as { percentiles?: number[] }).percentiles ?? [];
    const add = (seriesName: string, extra: string[] = []) =>
      series.set(seriesName, {
        metric: name,
        labels: new Set([...labelNames, ...extra, ...TARGET_LABELS]),
      });
    if (type === 'histogram') {
      add(`${name}_bucket`, ['le']);
      for (const suffix of ['_sum', '_count']) add(`${name}${suffix}`);
    } else if (type === 'summary') {
      for (const suffix of ['_sum', '_count']) add(`${name}${suffix}`);
      if (percentiles.length > 0) add(name, ['quantile']);
    } else {
      add(name);
    }
  }
  return series;
}

function exportedNames(): Set<string> {
  return new Set(exportedSeries().keys());
}

const PROMQL_WORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'inf',
  'nan',
  'atan2',
]);

/**
 * The metric names a PromQL expression (or a Grafana query: `$variables`
 * allowed) selects: identifiers that are not functions, keywords, label
 * names in matchers or in by/on clauses, strings or durations.
 */
function metricNamesIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\$\{[^}]*\}|\$\w+|\[\[[^\]]*\]\]/g, '1')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names: string[] = [];
  for (const m of bare.matchAll(/(?<![\w:.])([a-zA-Z_:][\w:]*)(\s*\()?/g)) {
    const [, name = '', call] = m;
    if (call !== undefined || PROMQL_WORDS.has(name.toLowerCase())) continue;
    names.push(name);
  }
  return names;
}

/** One label matcher of a selector, its value unquoted. */
interface Matcher {
  label: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
}

/** The unquoted text of a PromQL string literal. */
function unquote(literal: string): string {
  if (literal.startsWith('`')) return literal.slice(1, -1);
  if (literal.startsWith("'"))
    return JSON.parse(`"${literal.slice(1, -1).replace(/\\'/g, "'").replace(/"/g, '\\"')}"`);
  return JSON.parse(literal);
}

/**
 * The selectors with braces in an expression (`name{…}` or `{…}`), each with
 * its metric name (undefined for `{…}`) and its matchers, or the text of a
 * matcher that could not be read. Grafana's `${…}` and `[[…]]` are left out.
 */
function selectorsIn(expr: string): Array<{ metric?: string; matchers: Matcher[]; bad: string[] }> {
  const strings: string[] = [];
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, (literal) => {
      strings.push(unquote(literal));
      return `"${strings.length - 1}"`;
    })
    .replace(/\$\{[^}]*\}|\[\[[^\]]*\]\]/g, '1');
  const selectors: Array<{ metric?: string; matchers: Matcher[]; bad: string[] }> = [];
  for (const m of bare.matchAll(/(?<![\w:.])([a-zA-Z_:][\w:]*)?\s*\{([^}]*)\}/g)) {
    const [, word, body = ''] = m;
    // `… unless {__name__="x"}`: the word before the braces is no metric.
    const metric = word !== undefined && !PROMQL_WORDS.has(word.toLowerCase()) ? word : undefined;
    const matchers: Matcher[] = [];
    const bad: string[] = [];
    for (const part of body.split(',').map((p) => p.trim())) {
      if (part === '') continue;
      const found = /^([a-zA-Z_]\w*)\s*(=~|!~|!=|=)\s*"(\d+)"$/.exec(part);
      if (!found) bad.push(part);
      else
        matchers.push({
          label: found[1] ?? '',
          op: found[2] as Matcher['op'],
          value: strings[Number(found[3])] ?? '',
        });
    }
    selectors.push({ ...(metric === undefined ? {} : { metric }), matchers, bad });
  }
  return selectors;
}

/** Whether a matcher's value holds a Grafana variable, known only when the dashboard runs. */
const isVariable = (value: string) => value.includes('$');

/** A regex matcher's value as PromQL reads it: anchored at both ends. */
const anchored = (value: string) => new RegExp(`^(?:${value})$`);

/**
 * What is wrong with the metrics and labels an expression selects: a metric
 * hiresync does not export (by name or by a `__name__` matcher), a label the
 * metric does not have, or a value hiresync never gives one of its enumerated
 * labels (src/status/metric-label-values.ts). Empty when nothing is.
 */
function selectorProblems(expr: string, exported: Map<string, ExportedSeries>): string[] {
  const problems = metricNamesIn(expr)
    .filter((n) => !exported.has(n))
    .map((n) => `unknown metric ${n}`);
  for (const selector of selectorsIn(expr)) {
    problems.push(...selector.bad.map((b) => `unreadable matcher ${b}`));
    const names = selector.metric === undefined ? [] : [selector.metric];
    for (const { label, op, value } of selector.matchers) {
      if (label !== '__name__') continue;
      if (op === '=') names.push(value);
      else if (op === '=~') {
        const matched = [...exported.keys()].filter((n) => anchored(value).test(n));
        if (matched.length === 0) problems.push(`no exported metric matches __name__=~"${value}"`);
        names.push(...matched);
      }
    }
    if (names.length === 0)
      problems.push(
        `a selector without a metric name: {${selector.matchers.map((m) => m.label).join(', ')}}`,
      );
    for (const name of names) {
      const series = exported.get(name);
      if (!series) {
        if (selector.metric !== name) problems.push(`unknown metric ${name}`);
        continue;
      }
      for (const { label, op, value } of selector.matchers) {
        if (label === '__name__') continue;
        if (!series.labels.has(label)) {
          problems.push(`${name} has no label ${label}`);
          continue;
        }
        const known = METRIC_LABEL_VALUES[series.metric]?.[label];
        if (known === undefined || isVariable(value)) continue;
        const wanted =
          op === '=' || op === '!='
            ? [value]
            : /^[\w|]+$/.test(value)
              ? value.split('|')
              : known.some((k) => anchored(value).test(k))
                ? []
                : [value];
        for (const v of wanted)
          if (!known.includes(v))
            problems.push(`${name}{${label}} is never "${v}" (hiresync sends ${known.join(', ')})`);
      }
    }
  }
  return problems;
}

interface Rule {
  alert?: unknown;
  expr?: unknown;
  for?: unknown;
  labels?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

function readRules(): Rule[] {
  const doc = parse(readFileSync(RULES_PATH, 'utf8')) as { groups?: unknown };
  expect(Array.isArray(doc.groups)).toBe(true);
  const groups = doc.groups as Array<{ name?: unknown; rules?: unknown }>;
  expect(groups.length).toBeGreaterThan(0);
  return groups.flatMap((group) => {
    expect(typeof group.name).toBe('string');
    expect(Array.isArray(group.rules)).toBe(true);
    return group.rules as Rule[];
  });
}

interface Panel {
  title?: string;
  type?: string;
  datasource?: { uid?: string };
  targets?: Array<{ expr?: string; datasource?: { uid?: string } }>;
  panels?: Panel[];
}

function readDashboard(): {
  panels: Panel[];
  templating: {
    list: Array<{ name: string; type: string; query?: unknown; datasource?: unknown }>;
  };
} {
  return JSON.parse(readFileSync(DASHBOARD_PATH, 'utf8'));
}

function allPanels(panels: Panel[]): Panel[] {
  return panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);
}

describe('deploy/prometheus-rules.yml', () => {
  it('is a list of Prometheus rule groups whose alerts have expr, for, a severity and annotations saying what to do', () => {
    const rules = readRules();
    for (const rule of rules) {
      expect(rule.alert, JSON.stringify(rule)).toMatch(/^[A-Z][A-Za-z]+$/);
      expect(typeof rule.expr).toBe('string');
      expect(rule.for).toMatch(/^\d+[smhdwy]$/);
      expect(['critical', 'warning', 'info']).toContain(rule.labels?.severity);
      expect(typeof rule.annotations?.summary).toBe('string');
      expect(String(rule.annotations?.description).length).toBeGreaterThan(80);
    }
  });

  it('alerts on a stale run, a failing run, re-authorization, refused credentials, rate limits, a backed-up queue and token errors', () => {
    const alerts = readRules().map((r) => r.alert);
    expect(alerts).toEqual(
      expect.arrayContaining([
        'HiresyncRunStale',
        'HiresyncRunFailing',
        'HiresyncNeedsReauthorization',
        'HiresyncCredentialsRefused',
        'HiresyncRateLimitedMostOfTheTime',
        'HiresyncQueueBackingUp',
        'HiresyncTokenErrors',
        'HiresyncNoWorkerAlive',
      ]),
    );
  });

  it('names only metrics hiresync exports, with labels they have and values hiresync sends', () => {
    const exported = exportedSeries();
    for (const rule of readRules()) {
      expect(
        selectorsIn(String(rule.expr)).length + metricNamesIn(String(rule.expr)).length,
      ).toBeGreaterThan(0);
      expect(selectorProblems(String(rule.expr), exported), `${rule.alert}: ${rule.expr}`).toEqual(
        [],
      );
    }
  });

  const promtool = (() => {
    try {
      execFileSync('promtool', ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  it.skipIf(!promtool)('passes promtool check rules (where promtool is installed)', () => {
    const out = execFileSync('promtool', ['check', 'rules', RULES_PATH.pathname], {
      encoding: 'utf8',
    });
    expect(out).toMatch(/SUCCESS/);
  });
});

describe('deploy/grafana-dashboard.json', () => {
  it('takes its Prometheus data source from a variable, in every panel and query', () => {
    const dashboard = readDashboard();
    expect(dashboard.templating.list).toContainEqual(
      expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }),
    );
    const panels = allPanels(dashboard.panels).filter((p) => p.type !== 'row');
    expect(panels.length).toBeGreaterThan(5);
    for (const panel of panels) {
      expect(panel.datasource?.uid, panel.title).toBe(DATASOURCE_VARIABLE);
      for (const target of panel.targets ?? [])
        expect(target.datasource?.uid).toBe(DATASOURCE_VARIABLE);
    }
  });

  it("names only metrics hiresync exports, with labels they have and values hiresync sends, in its panels' queries and its variables", () => {
    const exported = exportedSeries();
    const dashboard = readDashboard();
    const queries = allPanels(dashboard.panels).flatMap((p) =>
      (p.targets ?? []).map((t) => ({ where: p.title, expr: String(t.expr) })),
    );
    for (const variable of dashboard.templating.list) {
      if (variable.type !== 'query') continue;
      const text = JSON.stringify(variable.query);
      // Grafana's label_values(METRIC, LABEL): the metric is the first argument.
      const metric = /label_values\(([^,]+),/.exec(text)?.[1];
      queries.push({ where: `variable ${variable.name}`, expr: metric ?? text });
    }
    expect(queries.length).toBeGreaterThan(10);
    for (const { where, expr } of queries) {
      expect(metricNamesIn(expr).length, `${where}: ${expr}`).toBeGreaterThan(0);
      expect(selectorProblems(expr, exported), `${where}: ${expr}`).toEqual([]);
    }
  });
});

describe('the metric-name check of the deploy files', () => {
  it('finds the metrics an expression selects, and only them', () => {
    expect(
      metricNamesIn(
        'sum by (account, resource) (increase(hiresync_runs_total{outcome="failed", x=~"a|b"}[1h] offset 5m)) > 0 unless on (account) up == 0 or vector(0)',
      ),
    ).toEqual(['hiresync_runs_total', 'up']);
    expect(
      metricNamesIn('rate(hiresync_records_total{account=~"$account"}[$__rate_interval])'),
    ).toEqual(['hiresync_records_total']);
  });

  it('fails a rules file selecting an unknown metric by __name__, a label the metric lacks, or a value hiresync never sends', () => {
    const exported = exportedSeries();
    const bad = parse(`
groups:
  - name: bad
    rules:
      - alert: ByName
        expr: sum({__name__="hiresync_runs_failed_total"}) > 0 unless {__name__=~"hiresync_nothing_.*"}
      - alert: QueueState
        expr: hiresync_queue_jobs{state="queued"} > 0
      - alert: TokenOutcome
        expr: increase(hiresync_token_requests_total{outcome=~"refused|denied", account!="x"}[1h]) > 0
      - alert: NoSuchLabel
        expr: hiresync_last_run_failed{outcome="failed"} == 1
      - alert: RunMode
        expr: hiresync_run_duration_seconds_count{mode!='resync'}
`) as { groups: Array<{ rules: Rule[] }> };
    const problems = Object.fromEntries(
      bad.groups[0]?.rules.map((r) => [r.alert, selectorProblems(String(r.expr), exported)]) ?? [],
    );
    expect(problems).toEqual({
      ByName: [
        'unknown metric hiresync_runs_failed_total',
        'no exported metric matches __name__=~"hiresync_nothing_.*"',
        'a selector without a metric name: {__name__}',
      ],
      QueueState: [
        'hiresync_queue_jobs{state} is never "queued" (hiresync sends waiting, active, delayed, failed)',
      ],
      TokenOutcome: [
        'hiresync_token_requests_total{outcome} is never "denied" (hiresync sends ok, refused, error)',
      ],
      NoSuchLabel: ['hiresync_last_run_failed has no label outcome'],
      RunMode: [
        'hiresync_run_duration_seconds_count{mode} is never "resync" (hiresync sends incremental, full)',
      ],
    });
    // The same selectors, right, pass.
    expect(
      selectorProblems(
        'sum({__name__="hiresync_last_run_failed", account=~"$account"}) + count({__name__=~"hiresync_queue_.*", state=~"wait.*"}) + hiresync_token_requests_total{outcome=~"refused|error", job="hiresync"}',
        exported,
      ),
    ).toEqual([]);
  });

  it('counts a histogram or summary by the series it exposes', () => {
    const exported = exportedNames();
    expect(exported).toContain('hiresync_nodejs_gc_duration_seconds_bucket');
    expect(exported).toContain('hiresync_run_duration_seconds_count');
    expect(exported).not.toContain('hiresync_run_duration_seconds_bucket');
    expect(exported).toContain('hiresync_queue_jobs');
    expect(exported).toContain('hiresync_build_info');
  });
});
