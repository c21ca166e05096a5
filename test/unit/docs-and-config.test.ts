import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { RESOURCE_NAMES } from '../../src/resources/index.js';
import { variablesRead } from '../support/config-variables.js';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

function envFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^\s*#?\s*([A-Z_]+)=(.*)$/.exec(line);
    if (m?.[1]) out[m[1]] = m[2] ?? '';
  }
  return out;
}

describe('documentation and deployment files', () => {
  it('document every variable the configuration reads, in the README and .env.example', () => {
    const readme = read('README.md');
    const example = envFile(read('.env.example'));
    for (const name of variablesRead()) {
      expect(readme, name).toContain(`\`${name}\``);
      expect(Object.keys(example), name).toContain(name);
    }
  });

  it("give docker compose's worker a valid configuration on the built-in defaults", () => {
    const compose = read('docker-compose.yml');
    const database = /DATABASE_URL: (\S+)/.exec(compose)?.[1];
    const redis = /REDIS_URL: (\S+)/.exec(compose)?.[1];
    const config = loadConfig(
      {
        ...parseEnv(read('compose.demo.env')),
        DATABASE_URL: database,
        REDIS_URL: redis,
      },
      RESOURCE_NAMES,
    );
    expect(config.api.baseUrl).toBe('http://127.0.0.1:8910');
    expect(config.api.auth?.mode).toBe('client_credentials');
    // The simulator serves v3's shapes: the live service's recommended settings apply.
    expect(config.updatedFilter).toBe('updated_at=gte|{since}');
    expect(config.extraWalks).toEqual({ job_posts: ['active=false'] });
  });

  it('keep .env.example and compose.demo.env read alike by a POSIX shell and by Node', () => {
    for (const file of ['.env.example', 'compose.demo.env']) {
      const path = fileURLToPath(new URL(`../../${file}`, import.meta.url));
      // What `set -a; . FILE` exports, each variable the file names as NUL-separated NAME=VALUE.
      const script = `set -a; . "$1"; set +a; for n in $(sed -n 's/^\\([A-Z_]*\\)=.*/\\1/p' "$1"); do printf '%s=%s\\0' "$n" "$(printenv "$n")"; done`;
      const sourced = Object.fromEntries(
        execFileSync('bash', ['-c', script, 'bash', path], { env: {}, encoding: 'utf8' })
          .split('\0')
          .filter((item) => item !== '')
          .map((item) => [item.slice(0, item.indexOf('=')), item.slice(item.indexOf('=') + 1)]),
      );
      const parsed = parseEnv(read(file));
      expect(Object.keys(parsed).length, file).toBeGreaterThan(3);
      expect(sourced, file).toEqual(parsed);
    }
  });

  it("run docker compose's hiresync as the owner of its database, never as the server's superuser", () => {
    const compose = read('docker-compose.yml');
    const url = new URL(/DATABASE_URL: (\S+)/.exec(compose)?.[1] ?? '');
    const superuser = /POSTGRES_USER: (\S+)/.exec(compose)?.[1];
    expect(superuser).toBeDefined();
    expect(url.username).not.toBe(superuser);
    expect(compose).toContain('- ./deploy/postgres-init:/docker-entrypoint-initdb.d:ro');
    const init = read('deploy/postgres-init/10-hiresync-owner.sql');
    expect(init).toContain(
      `create role ${url.username} login nosuperuser nocreatedb nocreaterole password '${url.password}';`,
    );
    expect(init).toContain(`create database ${url.pathname.slice(1)} owner ${url.username};`);
  });

  it('keep .env.example a valid configuration of the live service once credentials are filled in', () => {
    const example = parseEnv(read('.env.example'));
    const config = loadConfig(
      {
        ...example,
        HIRESYNC_CLIENT_ID: 'id',
        HIRESYNC_CLIENT_SECRET: 'secret',
        DATABASE_URL: 'postgres://u@db/x',
        REDIS_URL: 'redis://r',
      },
      RESOURCE_NAMES,
    );
    expect(config.fullCron).toBe('0 3 * * *');
    expect(config.api.baseUrl).toBe('https://harvest.greenhouse.io');
    expect(config.updatedFilter).toBe('updated_at=gte|{since}');
    expect(config.extraWalks).toEqual({ job_posts: ['active=false'] });
  });

  it('keep package-lock.json one that npm ci accepts, as the README and CI say', () => {
    interface Locked {
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    }
    const manifest = JSON.parse(read('package.json')) as Locked;
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, Locked> };
    const root = lock.packages[''];
    expect(root?.dependencies).toEqual(manifest.dependencies);
    expect(root?.devDependencies).toEqual(manifest.devDependencies);
    // What npm ci reports as "Missing: NAME from lock file": a dependency of a
    // locked package (other platforms' optional ones included) that resolves to
    // no locked path, looking up node_modules folders as Node does.
    const missing: string[] = [];
    for (const [path, locked] of Object.entries(lock.packages)) {
      for (const name of Object.keys({ ...locked.dependencies, ...locked.optionalDependencies })) {
        let dir = path;
        let found = false;
        for (;;) {
          if (lock.packages[`${dir === '' ? '' : `${dir}/`}node_modules/${name}`]) found = true;
          if (found || dir === '') break;
          const cut = dir.lastIndexOf('/node_modules/');
          dir = cut === -1 ? '' : dir.slice(0, cut);
        }
        if (!found) missing.push(`${name} (of ${path || 'the root'})`);
      }
    }
    expect(missing).toEqual([]);
    expect(read('README.md')).toMatch(/`npm ci` installs exactly the versions locked/);
  });
});
