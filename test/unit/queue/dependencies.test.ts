import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const QUEUE_DIR = new URL('../../../src/queue/', import.meta.url);

describe('src/queue', () => {
  it('never imports the app, the commands or the CLI: dependencies point one way', () => {
    const imports = readdirSync(QUEUE_DIR)
      .filter((name) => name.endsWith('.ts'))
      .flatMap((name) =>
        [...readFileSync(new URL(name, QUEUE_DIR), 'utf8').matchAll(/from '([^']+)'/g)].map(
          (m) => `${name}: ${m[1]}`,
        ),
      );
    expect(imports.length).toBeGreaterThan(0);
    expect(
      imports.filter((i) => /'?\.\.\/(app|cli|demo|commands\/)/.test(i.split(': ')[1] ?? '')),
    ).toEqual([]);
  });
});
