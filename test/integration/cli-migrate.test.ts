import { describe, expect, inject, it } from 'vitest';
import { adminQuery, databaseUrl, TEST_DATABASE_PREFIX } from '../support/databases.js';
import { runCli } from '../support/run-cli.js';

describe('hiresync migrate', () => {
  it('exits 2 naming DATABASE_URL when it is missing, before connecting anywhere', async () => {
    const result = await runCli(['migrate']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/DATABASE_URL: is required/);
  });

  it('applies the migrations, then reports the database up to date', async () => {
    const admin = inject('databaseUrl');
    const name = `${TEST_DATABASE_PREFIX}cli_${Date.now()}`;
    await adminQuery(admin, [`create database ${name}`]);
    try {
      const env = { DATABASE_URL: databaseUrl(admin, name) };
      const first = await runCli(['migrate'], env);
      expect(first).toMatchObject({
        code: 0,
        stdout:
          'schema hiresync: applied 16 migration(s): 0001_accounts, 0002_partner_tokens, 0003_safe_casts, 0004_typed_column_names, 0005_typed_view_repairs, 0006_account_settings, 0007_connect_links, 0008_credentials_refused, 0009_shared_storage, 0010_erasures, 0011_webhook_secrets, 0012_policy_reapply, 0013_account_boundary, 0014_connect_binding, 0015_connect_link_reuse_data, 0016_demographic_labels\n' +
          'schema public: its views of shared storage made\n' +
          'analytics views made in: analytics\n',
      });
      const second = await runCli(['migrate'], env);
      expect(second).toMatchObject({ code: 0, stdout: 'database is up to date (2 schemas)\n' });
    } finally {
      await adminQuery(admin, [`drop database if exists ${name} with (force)`]);
    }
  });

  it('exits 1 with the cause and the variable to check when Postgres is unreachable', async () => {
    const result = await runCli(['migrate'], {
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'hiresync migrate: cannot connect (connection refused): check DATABASE_URL\n',
    );
  });

  it('exits 2 on an unknown command or option', async () => {
    expect((await runCli(['frobnicate'])).code).toBe(2);
    expect((await runCli(['migrate', '--bogus'])).code).toBe(2);
  });
});
