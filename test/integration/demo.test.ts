import { describe, expect, inject, it } from 'vitest';
import { runCli } from '../support/run-cli.js';

describe('npm run demo', () => {
  it('syncs every resource from the simulator and prints the summary and three non-empty analyst queries', async () => {
    const result = await runCli(['demo', '--records', '600'], {
      DATABASE_URL: inject('databaseUrl'),
      REDIS_URL: inject('redisUrl'),
    });
    expect(result.code).toBe(0);
    for (const resource of ['jobs', 'job_posts', 'tracking_links']) {
      expect(result.stdout).toMatch(
        new RegExp(`^${resource}\\s+full\\s+2\\s+\\d+\\s+\\d+\\s+0\\s+[\\d.]+\\s+succeeded$`, 'm'),
      );
    }
    for (const title of ['Links per source', 'Links per referrer', 'Links per job board']) {
      const section = result.stdout.split(`${title}:`)[1] ?? '';
      // header, rule, then at least one row with a count
      expect(section).toMatch(/-----\n.+\s\d+\n/);
    }
    expect(result.stdout).toContain('psql postgres://');
  });
});
