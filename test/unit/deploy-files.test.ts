import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Metrics } from '../../src/metrics.js';
import type { Database } from '../../src/warehouse/schema.js';

/** How the dashboard names its data source: Grafana's `${datasource}` variable. */
const DATASOURCE_VARIABLE = ['$', '{datasource}'].join('');

const RULES_PATH = new URL('../../deploy/prometheus-rules.yml', import.meta.url);
const DASHBOARD_PATH = new URL('../../deploy/grafana-dashboard.json', import.meta.url);

/**
 * Every metric name a worker's /metrics can hold: the registry of a real
 * Metrics with everything on (Node's metrics, Postgres and queue series),
 * with the series names a histogram or summary adds to its own.
 */
function exportedNames(): Set<string> {
  const metrics = new Metrics({
    defaultMetrics: true,
    // Only registered here, never read: no scrape is made.
    db: {} as Kysely<Database>,
    queue: { getJobCounts: async () => ({}) },
  });
  const names = new Set<string>();
  for (const metric of metrics.registry.getMetricsAsArray()) {
    const { name, type } = metric as unknown as { name: string; type: string };
    const percentiles = (metric as unknown as { percentiles?: number[] }).percentiles ?? [];
    if (type === 'histogram') {
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
    } else if (type === 'summary') {
      for (const suffix of ['_sum', '_count']) names.add(`${name}${suffix}`);
      if (percentiles.length > 0) names.add(name);
    } else {
      names.add(name);
    }
  }
  return names;
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

  it('alerts on a stale run, a failing run, re-authorization, rate limits, a backed-up queue and token errors', () => {
    const alerts = readRules().map((r) => r.alert);
    expect(alerts).toEqual(
      expect.arrayContaining([
        'HiresyncRunStale',
        'HiresyncRunFailing',
        'HiresyncNeedsReauthorization',
        'HiresyncRateLimitedMostOfTheTime',
        'HiresyncQueueBackingUp',
        'HiresyncTokenErrors',
      ]),
    );
  });

  it('names only metrics hiresync exports', () => {
    const exported = exportedNames();
    for (const rule of readRules()) {
      const names = metricNamesIn(String(rule.expr));
      expect(names.length, String(rule.alert)).toBeGreaterThan(0);
      expect(
        names.filter((n) => !exported.has(n)),
        `${rule.alert}: ${rule.expr}`,
      ).toEqual([]);
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

  it("names only metrics hiresync exports in its panels' queries and its variables", () => {
    const exported = exportedNames();
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
      const names = metricNamesIn(expr);
      expect(names.length, `${where}: ${expr}`).toBeGreaterThan(0);
      expect(
        names.filter((n) => !exported.has(n)),
        `${where}: ${expr}`,
      ).toEqual([]);
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

  it('counts a histogram or summary by the series it exposes', () => {
    const exported = exportedNames();
    expect(exported).toContain('hiresync_nodejs_gc_duration_seconds_bucket');
    expect(exported).toContain('hiresync_run_duration_seconds_count');
    expect(exported).not.toContain('hiresync_run_duration_seconds_bucket');
    expect(exported).toContain('hiresync_queue_jobs');
    expect(exported).toContain('hiresync_build_info');
  });
});
