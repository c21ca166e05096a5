import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

describe("a run lock's fence", () => {
  it('is awaited wherever a run lock is taken, so no taker writes beside pages its last holder was still committing', () => {
    const takers = sources(SRC).filter((file) => {
      const text = readFileSync(file, 'utf8');
      return /\brunLockKey\(/.test(text) && !file.endsWith('lock-keys.ts');
    });
    expect(takers.length).toBeGreaterThanOrEqual(4);
    const unfenced = takers.filter((file) => !/\bawaitRunFence\(/.test(readFileSync(file, 'utf8')));
    expect(unfenced.map((file) => file.slice(SRC.length))).toEqual([]);
  });
});
