// No other role's object in hiresync's way (docs/operating.md, "Roles"):
// `migrate` and the worker refuse to run while another role may create
// objects in schema hiresync, and warn for each other schema hiresync writes
// (public, all_accounts, every account's) where one may.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import { main } from '../../src/main.js';
import { captureIo } from '../support/capture-io.js';
import { adminQuery, databaseUrl, TEST_DATABASE_PREFIX } from '../support/databases.js';
import { testRole } from '../support/leaky-reader.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';

const { defer, accounts, cli } = cleanupAfterEach();

async function migrate(env: Record<string, string>) {
  const io = captureIo();
  const code = await main(['migrate'], env, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

describe('roles that may create objects where hiresync writes', () => {
  it('migrate and the worker refuse while another role (or PUBLIC) may create in schema hiresync, naming it and the revoke line', async () => {
    const h = await accounts({ accounts: ['globex'], records: 5 });
    const db = h.database.db;
    const env = { DATABASE_URL: h.database.url };
    const { role, drop } = await testRole(db, 'planter');
    defer(drop);
    await sql.raw(`grant create on schema hiresync to ${role}`).execute(db);
    await sql`grant create on schema hiresync to public`.execute(db);

    const refused = await migrate(env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `hiresync migrate: role ${role}, PUBLIC (every role) can create objects in schema hiresync`,
    );
    expect(refused.stderr).toContain(
      `revoke create on schema hiresync from ${role}; revoke create on schema hiresync from public;`,
    );
    const worker = cli(['worker'], h.env);
    expect(await worker.exit).toBe(1);
    expect(worker.stderr()).toContain(
      `role ${role}, PUBLIC (every role) can create objects in schema hiresync`,
    );

    await sql.raw(`revoke create on schema hiresync from public, ${role}`).execute(db);
    expect((await migrate(env)).code).toBe(0);
  });

  it("migrate warns once per account schema and public where another role may create objects, and the worker logs one warn line for each at start; hiresync's own user is never named", async () => {
    const h = await accounts({ accounts: ['globex'], records: 5 });
    const db = h.database.db;
    const env = { DATABASE_URL: h.database.url };
    expect(await migrate(env)).toMatchObject({ code: 0, stderr: '' });
    const { role, drop } = await testRole(db, 'planter');
    defer(drop);
    await sql.raw(`grant create on schema globex to ${role}`).execute(db);
    // As every database made before Postgres 15 has it.
    await sql`grant create on schema public to public`.execute(db);
    defer(() => sql`revoke create on schema public from public`.execute(db));

    const warned = await migrate(env);
    expect(warned.code).toBe(0);
    expect(warned.stderr.split('\n').filter((line) => line.includes('can create objects'))).toEqual(
      [
        `hiresync migrate: warning: role ${role} can create objects in schema globex, which hiresync writes: such a role can put objects of its own in front of the readers of the schema and in hiresync's way. Revoke it unless you mean it: revoke create on schema globex from ${role};`,
        "hiresync migrate: warning: PUBLIC (every role) can create objects in schema public, which hiresync writes: such a role can put objects of its own in front of the readers of the schema and in hiresync's way. Revoke it unless you mean it: revoke create on schema public from public;",
      ],
    );

    const worker = cli(['worker'], h.env);
    await waitFor(async () => worker.stdout().includes('"msg":"worker started"'));
    const warnings = worker
      .stdout()
      .split('\n')
      .filter((line) => line.includes('can create objects'))
      .map((line) => JSON.parse(line) as { level: number; schema: string; roles: string[] });
    expect(warnings.map(({ level, schema, roles }) => ({ level, schema, roles }))).toEqual([
      { level: 40, schema: 'globex', roles: [role] },
      { level: 40, schema: 'public', roles: ['public'] },
    ]);
    worker.child.kill('SIGTERM');
    expect(await worker.exit).toBe(0);
  });

  it('run as a role that is no superuser but owns its database (as docker-compose runs it), migrate names PUBLIC on public and never that role, owner of every schema', async () => {
    const admin = inject('databaseUrl');
    const suffix = randomBytes(4).toString('hex');
    const owner = `hiresync_test_owner_${suffix}`;
    const name = `${TEST_DATABASE_PREFIX}owned_${suffix}`;
    await adminQuery(admin, [
      `create role ${owner} login`,
      `create database ${name} owner ${owner}`,
    ]);
    defer(() =>
      adminQuery(admin, [`drop database if exists ${name} with (force)`, `drop role ${owner}`]),
    );
    const url = new URL(databaseUrl(admin, name));
    url.username = owner;
    url.password = '';
    // As every database made before Postgres 15 has it.
    await adminQuery(url.href, ['grant create on schema public to public']);
    const first = await migrate({ DATABASE_URL: url.href });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('schema public: its views of shared storage made');
    expect(first.stderr).toBe(
      "hiresync migrate: warning: PUBLIC (every role) can create objects in schema public, which hiresync writes: such a role can put objects of its own in front of the readers of the schema and in hiresync's way. Revoke it unless you mean it: revoke create on schema public from public;\n",
    );
  });
});
