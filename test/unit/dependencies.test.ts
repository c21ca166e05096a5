import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** `file: specifier` for every import of the .ts files in `dir` (relative to src/). */
function importsOf(dir: string): string[] {
  const folder = new URL(`../../src/${dir}/`, import.meta.url);
  return readdirSync(folder)
    .filter((name) => name.endsWith('.ts'))
    .flatMap((name) =>
      [...readFileSync(new URL(name, folder), 'utf8').matchAll(/from '([^']+)'/g)].map(
        (m) => `${name}: ${m[1]}`,
      ),
    );
}

describe('dependencies point one way', () => {
  it('src/queue never imports the app, the commands or the CLI', () => {
    const imports = importsOf('queue');
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((i) => /: \.\.\/(app|cli|main|demo|commands\/)/.test(i))).toEqual([]);
  });

  it('src/redis (the lock shared by the run lock and the token refresh) imports only the error classes of hiresync', () => {
    const imports = importsOf('redis');
    expect(imports.filter((i) => /: \.\.\//.test(i) && !/: \.\.\/errors\.js$/.test(i))).toEqual([]);
  });

  it('src/sync speaks only through its ports: no API, warehouse, queue, Redis or database code', () => {
    const imports = importsOf('sync');
    expect(imports.length).toBeGreaterThan(0);
    expect(
      imports.filter((i) =>
        /: (\.\.\/(api|warehouse|queue|redis|resources|app)|got|bullmq|ioredis|pg|kysely)/.test(i),
      ),
    ).toEqual([]);
  });

  it('src/warehouse and src/api never import the queue, the app, the accounts or each other', () => {
    expect(
      importsOf('warehouse').filter((i) =>
        /: \.\.\/(api|queue|app|commands|resources|accounts)\//.test(i),
      ),
    ).toEqual([]);
    expect(
      importsOf('api').filter((i) => /: \.\.\/(warehouse|queue|app|commands)\//.test(i)),
    ).toEqual([]);
  });

  it('src/config (src/config.ts and src/config/) imports no layer above it: no accounts, API, warehouse, queue or commands', () => {
    const imports = [
      ...importsOf('config'),
      ...[
        ...readFileSync(new URL('../../src/config.ts', import.meta.url), 'utf8').matchAll(
          /from '([^']+)'/g,
        ),
      ].map((m) => `config.ts: ${m[1]?.replace(/^\.\//, '../')}`),
    ];
    expect(imports.length).toBeGreaterThan(0);
    expect(
      imports.filter((i) =>
        /: \.\.\/(accounts|api|warehouse|queue|commands|app|simulator)\b/.test(i),
      ),
    ).toEqual([]);
  });

  it('src/accounts never imports the queue, the app, the commands or the CLI', () => {
    const imports = importsOf('accounts');
    expect(imports.length).toBeGreaterThan(0);
    expect(
      imports.filter((i) => /: \.\.\/(queue|app|cli|main|demo|commands|simulator)\b/.test(i)),
    ).toEqual([]);
  });
});
