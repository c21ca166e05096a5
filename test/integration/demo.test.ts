import { describe, expect, inject, it } from 'vitest';
import { runCli } from '../support/run-cli.js';

describe('npm run demo', () => {
  it('syncs every resource of two accounts from the simulator and prints the summary and non-empty analyst queries, one across both accounts', async () => {
    const result = await runCli(['demo', '--records', '600'], {
      DATABASE_URL: inject('databaseUrl'),
      REDIS_URL: inject('redisUrl'),
    });
    expect(result.code).toBe(0);
    for (const resource of ['jobs', 'job_posts', 'tracking_links']) {
      expect(result.stdout).toMatch(
        new RegExp(
          `^default\\s+${resource}\\s+full\\s+2\\s+\\d+\\s+\\d+\\s+0\\s+[\\d.]+\\s+succeeded$`,
          'm',
        ),
      );
      expect(result.stdout).toMatch(
        new RegExp(
          `^acme\\s+${resource}\\s+full\\s+1\\s+\\d+\\s+\\d+\\s+0\\s+[\\d.]+\\s+succeeded$`,
          'm',
        ),
      );
    }
    const across = result.stdout.split('Every account at once')[1] ?? '';
    expect(across).toMatch(/^acme\s+[1-9]\d*\s+[1-9]\d*\s+[1-9]\d*$/m);
    expect(across).toMatch(/^default\s+[1-9]\d*\s+[1-9]\d*\s+[1-9]\d*$/m);
    for (const title of ['Links per source', 'Links per referrer', 'Links per job board']) {
      const section = result.stdout.split(`${title}:`)[1] ?? '';
      // header, rule, then at least one row with a count
      expect(section).toMatch(/-----\n.+\s\d+\n/);
    }
    expect(result.stdout).toContain('psql postgres://');
  });
});
