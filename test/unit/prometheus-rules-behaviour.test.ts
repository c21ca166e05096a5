import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';

/**
 * What deploy/prometheus-rules.yml's alerts do with the series hiresync
 * exports, proved by `promtool test rules` (Debian's `prometheus` package;
 * .ci/run installs it, and in CI a missing promtool fails these tests).
 * Each case feeds series minute by minute, as Prometheus scrapes them, and
 * states the alerts that fire at one moment. Annotations are left out of the
 * rules the cases run (promtool would compare their rendered text); their
 * templates are checked by `promtool check rules` in deploy-files.test.ts.
 */

const RULES_PATH = new URL('../../deploy/prometheus-rules.yml', import.meta.url);

const promtool = (() => {
  try {
    execFileSync('promtool', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (!promtool && process.env.CI)
  throw new Error("promtool is missing in CI: install Debian's prometheus package");

const dir = mkdtempSync(join(tmpdir(), 'hiresync-rules-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The rules file without annotations. */
function rulesWithoutAnnotations(): string {
  const doc = parse(readFileSync(RULES_PATH, 'utf8')) as {
    groups: Array<{ rules: Array<Record<string, unknown>> }>;
  };
  for (const group of doc.groups) for (const rule of group.rules) delete rule.annotations;
  return stringify(doc);
}

/** One input series: selector text and promtool's expanding notation (`_x5 1x60`), one value a minute. */
type Series = [series: string, values: string];

/**
 * Passes when, fed `series`, alert `alert` fires at minute `at` for exactly
 * the label sets `firing` (an alert's own labels, severity included), and
 * fails with promtool's account of what fired otherwise.
 */
function expectAlerts(
  series: Series[],
  at: number,
  alert: string,
  firing: Array<Record<string, string>>,
): void {
  writeFileSync(join(dir, 'rules.yml'), rulesWithoutAnnotations());
  const test = {
    rule_files: ['rules.yml'],
    evaluation_interval: '1m',
    tests: [
      {
        interval: '1m',
        input_series: series.map(([s, values]) => ({ series: s, values })),
        alert_rule_test: [
          {
            eval_time: `${at}m`,
            alertname: alert,
            exp_alerts: firing.map((labels) => ({ exp_labels: labels })),
          },
        ],
      },
    ],
  };
  const path = join(dir, 'test.yml');
  writeFileSync(path, stringify(test));
  try {
    execFileSync('promtool', ['test', 'rules', path], { encoding: 'utf8', stdio: 'pipe' });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    expect.fail(`${alert} at ${at}m:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

const W1 = 'instance="w1:9464",job="hiresync"';
const W2 = 'instance="w2:9464",job="hiresync"';

describe.skipIf(!promtool)('deploy/prometheus-rules.yml in promtool', () => {
  describe('HiresyncRunFailing', () => {
    const failing = { account: 'alpha', resource: 'jobs', severity: 'warning' };

    it('fires for the first failure after a restart, whose failed-runs counter appears at 1', () => {
      expectAlerts(
        [
          // The restarted worker's first failed run: the counter is born at 1.
          [
            `hiresync_run_duration_seconds_count{${W1},account="alpha",resource="jobs",mode="incremental",outcome="failed"}`,
            '_x5 1x60',
          ],
          [`hiresync_last_run_failed{${W1},account="alpha",resource="jobs"}`, '0x5 1x60'],
        ],
        45,
        'HiresyncRunFailing',
        [failing],
      );
    });

    it('fires for a resource whose runs fail once a day, whatever the counters say', () => {
      expectAlerts(
        [
          [
            `hiresync_run_duration_seconds_count{${W1},account="alpha",resource="jobs",mode="full",outcome="succeeded"}`,
            '3x180',
          ],
          [
            `hiresync_run_duration_seconds_count{${W1},account="alpha",resource="jobs",mode="full",outcome="failed"}`,
            '_x100 1x80',
          ],
          [`hiresync_last_run_failed{${W1},account="alpha",resource="jobs"}`, '0x100 1x80'],
        ],
        170,
        'HiresyncRunFailing',
        [failing],
      );
    });

    it('fires once per (account, resource) when several workers report it', () => {
      expectAlerts(
        [
          [`hiresync_last_run_failed{${W1},account="alpha",resource="jobs"}`, '1x60'],
          [`hiresync_last_run_failed{${W2},account="alpha",resource="jobs"}`, '1x60'],
          [`hiresync_last_run_failed{${W1},account="alpha",resource="job_posts"}`, '0x60'],
        ],
        45,
        'HiresyncRunFailing',
        [failing],
      );
    });

    it('stays quiet when the next run succeeds within half an hour', () => {
      expectAlerts(
        [[`hiresync_last_run_failed{${W1},account="alpha",resource="jobs"}`, '0x5 1x14 0x60']],
        60,
        'HiresyncRunFailing',
        [],
      );
    });

    it('stays quiet while the account needs re-authorizing (HiresyncNeedsReauthorization says what to do)', () => {
      expectAlerts(
        [
          [`hiresync_last_run_failed{${W1},account="alpha",resource="jobs"}`, '1x60'],
          [`hiresync_account_needs_reauthorization{${W1},account="alpha"}`, '1x60'],
        ],
        45,
        'HiresyncRunFailing',
        [],
      );
    });
  });

  describe('HiresyncNoWorkerAlive', () => {
    const alive = (instance: string, values: string) =>
      [`hiresync_workers_alive{${instance}}`, values] as Series;
    const down = { severity: 'critical' };

    it('fires when the workers still scraped report no live heartbeat for five minutes, never while one is alive', () => {
      expectAlerts([alive(W1, '1x10 0x50')], 20, 'HiresyncNoWorkerAlive', [down]);
      expectAlerts([alive(W1, '1x10 0x50')], 14, 'HiresyncNoWorkerAlive', []);
      expectAlerts([alive(W1, '1x10 0x50'), alive(W2, '1x60')], 20, 'HiresyncNoWorkerAlive', []);
    });

    it('fires when every worker is dead and nothing serves /metrics any more, not through a restart shorter than its grace', () => {
      expectAlerts([alive(W1, '1x10'), alive(W2, '1x10')], 25, 'HiresyncNoWorkerAlive', [down]);
      expectAlerts([alive(W1, '1x10')], 12, 'HiresyncNoWorkerAlive', []);
      expectAlerts([alive(W1, '1x10 _x2 1x40')], 15, 'HiresyncNoWorkerAlive', []);
    });
  });

  describe('HiresyncAccountsUnread', () => {
    // '0+60x10 600x50': read every minute for 10 minutes, then never again.
    const read = (instance: string, values: string) =>
      [`hiresync_metrics_read_timestamp_seconds{${instance}}`, values] as Series;
    const blind = { severity: 'warning' };

    it('fires once no worker has read Postgres for 5 minutes and 5 more, never while one reads it', () => {
      expectAlerts([read(W1, '0+60x10 600x50')], 30, 'HiresyncAccountsUnread', [blind]);
      expectAlerts([read(W1, '0+60x10 600x50')], 18, 'HiresyncAccountsUnread', []);
      expectAlerts(
        [read(W1, '0+60x10 600x50'), read(W2, '0+60x60')],
        30,
        'HiresyncAccountsUnread',
        [],
      );
    });
  });

  describe('HiresyncCredentialsRefused', () => {
    it("fires for an account whose secret the token service refuses, and quiets its failing runs' alert", () => {
      const series: Series[] = [
        [`hiresync_last_run_failed{${W1},account="alpha",resource="jobs"}`, '1x60'],
        [`hiresync_account_credentials_refused{${W1},account="alpha"}`, '1x60'],
        [`hiresync_account_credentials_refused{${W1},account="beta"}`, '0x60'],
      ];
      expectAlerts(series, 45, 'HiresyncCredentialsRefused', [
        { account: 'alpha', severity: 'warning' },
      ]);
      expectAlerts(series, 45, 'HiresyncRunFailing', []);
    });

    it('stays quiet once the account is enabled again', () => {
      expectAlerts(
        [[`hiresync_account_credentials_refused{${W1},account="alpha"}`, '1x10 0x50']],
        45,
        'HiresyncCredentialsRefused',
        [],
      );
    });
  });

  describe('HiresyncTokenErrors', () => {
    const refused = (values: string) =>
      [`hiresync_token_requests_total{${W1},account="alpha",outcome="refused"}`, values] as Series;
    const ok = (values: string) =>
      [`hiresync_token_requests_total{${W1},account="alpha",outcome="ok"}`, values] as Series;

    it('fires for a token refused once, the series appearing at 1', () => {
      expectAlerts([refused('_x10 1x50')], 30, 'HiresyncTokenErrors', [
        { account: 'alpha', severity: 'warning' },
      ]);
    });

    it('fires for a refusal counted from 0', () => {
      expectAlerts([refused('0x10 1x50'), ok('0x60')], 30, 'HiresyncTokenErrors', [
        { account: 'alpha', severity: 'warning' },
      ]);
    });

    it('fires for a refusal after a restart, the restarted worker counting from 1 again', () => {
      expectAlerts([refused('2x30 _x3 1x40'), ok('5x30 _x3 _x40')], 60, 'HiresyncTokenErrors', [
        { account: 'alpha', severity: 'warning' },
      ]);
    });

    it('stays quiet once a token is got after the refusal, its series appearing at 1', () => {
      expectAlerts([refused('_x5 1x60'), ok('_x10 1x55')], 40, 'HiresyncTokenErrors', []);
    });

    it('stays quiet for a refusal more than an hour old', () => {
      expectAlerts([refused('_x5 1x200')], 150, 'HiresyncTokenErrors', []);
    });
  });

  describe('HiresyncRateLimitedMostOfTheTime', () => {
    /** A counter of wait seconds growing by `perMinute` every minute for 100 minutes. */
    const waits = (resource: string, perMinute: number) =>
      [
        `hiresync_rate_limit_wait_seconds_total{${W1},account="alpha",resource="${resource}"}`,
        `0+${perMinute}x100`,
      ] as Series;

    it('stays quiet when three concurrent runs of an account each wait a fifth of the time', () => {
      expectAlerts(
        [waits('jobs', 12), waits('job_posts', 12), waits('applications', 12)],
        95,
        'HiresyncRateLimitedMostOfTheTime',
        [],
      );
    });

    it("fires when one resource's runs wait most of the time, naming it", () => {
      expectAlerts(
        [waits('jobs', 48), waits('job_posts', 6)],
        95,
        'HiresyncRateLimitedMostOfTheTime',
        [{ account: 'alpha', resource: 'jobs', severity: 'info' }],
      );
    });
  });

  describe('above HIRESYNC_METRICS_ACCOUNT_SERIES: aggregates, and per-account series only of the accounts that need action', () => {
    /** What a worker of 10,000 accounts exports beside the series of the cases: the aggregates. */
    const aggregates: Series[] = [
      [`hiresync_metrics_per_account_series{${W1}}`, '0x400'],
      [`hiresync_accounts{${W1},state="enabled"}`, '9999x400'],
      [`hiresync_accounts{${W1},state="credentials_refused"}`, '1x400'],
      [`hiresync_account_resources{${W1},resource="jobs",state="ok"}`, '9998x400'],
      [`hiresync_account_resources{${W1},resource="jobs",state="failed"}`, '1x400'],
      [`hiresync_account_resources{${W1},resource="jobs",state="stale"}`, '1x400'],
      // Every account's runs counted in one series without the account label.
      [
        `hiresync_run_duration_seconds_count{${W1},resource="jobs",mode="incremental",outcome="succeeded"}`,
        '0+400x400',
      ],
    ];

    it('fires HiresyncRunFailing for the failing account, whose series is born at 1 when it starts to fail', () => {
      expectAlerts(
        [
          ...aggregates,
          [`hiresync_last_run_failed{${W1},account="bulk04217",resource="jobs"}`, '_x5 1x60'],
        ],
        45,
        'HiresyncRunFailing',
        [{ account: 'bulk04217', resource: 'jobs', severity: 'warning' }],
      );
    });

    it('fires HiresyncRunStale for the account whose last success is 7 hours old, its series born once it is stale', () => {
      // Minute 400 is epoch 24,000 s: a last success at 0 is 6 h 40 min old then.
      expectAlerts(
        [
          ...aggregates,
          [
            `hiresync_last_success_timestamp_seconds{${W1},account="bulk00042",resource="jobs"}`,
            '_x60 0x340',
          ],
        ],
        400,
        'HiresyncRunStale',
        [{ account: 'bulk00042', resource: 'jobs', severity: 'warning' }],
      );
    });

    it('fires HiresyncCredentialsRefused for the account whose secret is refused, and quiets its failing runs', () => {
      const series: Series[] = [
        ...aggregates,
        [`hiresync_last_run_failed{${W1},account="bulk00025",resource="jobs"}`, '1x60'],
        [`hiresync_account_credentials_refused{${W1},account="bulk00025"}`, '1x60'],
      ];
      expectAlerts(series, 45, 'HiresyncCredentialsRefused', [
        { account: 'bulk00025', severity: 'warning' },
      ]);
      expectAlerts(series, 45, 'HiresyncRunFailing', []);
    });

    it("stays quiet about the rate limit when every account's waits add up in one series past 100%", () => {
      expectAlerts(
        [
          ...aggregates,
          [`hiresync_rate_limit_wait_seconds_total{${W1},resource="jobs"}`, '0+600x100'],
        ],
        95,
        'HiresyncRateLimitedMostOfTheTime',
        [],
      );
    });
  });
});
