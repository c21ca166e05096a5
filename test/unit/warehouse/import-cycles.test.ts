import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const WAREHOUSE = fileURLToPath(new URL('../../../src/warehouse/', import.meta.url));

/** The .ts files under `dir`, with the sibling modules each imports at run time (not `import type`). */
function runtimeImports(dir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const walk = (folder: string): void => {
    for (const name of readdirSync(folder)) {
      const file = path.join(folder, name);
      if (statSync(file).isDirectory()) walk(file);
      else if (name.endsWith('.ts')) {
        const source = readFileSync(file, 'utf8');
        const targets = [...source.matchAll(/^import (?!type )[^;]*?from '(\.[^']+)'/gms)]
          .map((m) => path.resolve(folder, (m[1] ?? '').replace(/\.js$/, '.ts')))
          .filter((target) => target.startsWith(dir));
        graph.set(file, targets);
      }
    }
  };
  walk(dir);
  return graph;
}

/** One import cycle of `graph` as relative paths, or undefined when it has none. */
function findCycle(graph: Map<string, string[]>, root: string): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): string[] | undefined => {
    if (state.get(file) === 'done') return undefined;
    if (state.get(file) === 'open') return [...stack.slice(stack.indexOf(file)), file];
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(file, 'done');
    return undefined;
  };
  for (const file of graph.keys()) {
    const cycle = visit(file);
    if (cycle) return cycle.map((f) => path.relative(root, f));
  }
  return undefined;
}

describe('warehouse modules', () => {
  it('import one another one way: no runtime import cycle inside src/warehouse', () => {
    const graph = runtimeImports(WAREHOUSE);
    expect(graph.size).toBeGreaterThan(10);
    expect(findCycle(graph, WAREHOUSE)).toBeUndefined();
  });
});
