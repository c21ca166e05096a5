import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { RESOURCE_NAMES } from '../../src/resources/index.js';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

/** Every environment variable the configuration (src/config/load-config.ts and src/config/) reads. */
function variablesRead(): string[] {
  const folder = new URL('../../src/config/', import.meta.url);
  const source = [
    read('src/config/load-config.ts'),
    ...readdirSync(folder)
      .filter((name) => name.endsWith('.ts'))
      .map((name) => read(`src/config/${name}`)),
  ].join('\n');
  return [
    ...new Set(source.match(/\b(HIRESYNC_[A-Z_]+|DATABASE_URL|REDIS_URL|LOG_LEVEL)\b/g)),
  ].sort();
}

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
        ...envFile(read('compose.demo.env')),
        DATABASE_URL: database,
        REDIS_URL: redis,
      },
      RESOURCE_NAMES,
    );
    expect(config.api.baseUrl).toBe('http://127.0.0.1:8910');
    expect(config.api.auth?.mode).toBe('client_credentials');
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

  it('keep .env.example a valid configuration once credentials are filled in', () => {
    const example = envFile(read('.env.example'));
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
