import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const folder = new URL('../../src/redis/scripts/', import.meta.url);
const files = readdirSync(folder).filter((file) => file.endsWith('.lua'));

/** Commands that take no key: the rest take theirs as the first argument. */
const KEYLESS = new Set(['TIME']);

/** The script without its comments (`--[[ … ]]` blocks and `--` to the end of a line). */
function code(lua: string): string {
  return lua.replace(/--\[\[[\s\S]*?\]\]/g, '').replace(/--[^\n]*/g, '');
}

/**
 * Every key a script touches, as written: the first argument of each
 * `redis.call`/`redis.pcall` of a command that takes a key, a local alias
 * (`local key = KEYS[1]`) resolved to what it names.
 */
function keysTouched(lua: string): { command: string; key: string }[] {
  const source = code(lua);
  const aliases = new Map<string, string>();
  for (const [, name, value] of source.matchAll(/local\s+(\w+)\s*=\s*(KEYS\[\d+\])/g)) {
    aliases.set(name as string, value as string);
  }
  const touched: { command: string; key: string }[] = [];
  for (const [, command, rest] of source.matchAll(
    /redis\.p?call\(\s*['"](\w+)['"]\s*(?:,\s*([^,)]+))?/g,
  )) {
    const name = (command as string).toUpperCase();
    if (KEYLESS.has(name)) continue;
    const argument = (rest ?? '').trim();
    touched.push({ command: name, key: aliases.get(argument) ?? argument });
  }
  return touched;
}

describe('hiresync Lua scripts under a Redis Cluster', () => {
  it('are found, each named <name>-<numkeys>.lua', () => {
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(file).toMatch(/-\d+\.lua$/);
  });

  it.each(files)(
    '%s touches only the keys passed in KEYS (none built inside the script), within its declared number of keys',
    (file) => {
      const lua = readFileSync(new URL(file, folder), 'utf8');
      const numberOfKeys = Number(/-(\d+)\.lua$/.exec(file)?.[1]);
      const touched = keysTouched(lua);
      expect(touched.length).toBeGreaterThan(0);
      for (const { command, key } of touched) {
        expect(key, `${file}: ${command}`).toMatch(/^KEYS\[\d+\]$/);
        const index = Number(/\d+/.exec(key)?.[0]);
        expect(index, `${file}: ${command} ${key}`).toBeGreaterThanOrEqual(1);
        expect(index, `${file}: ${command} ${key}`).toBeLessThanOrEqual(numberOfKeys);
      }
      // No key name is assembled from text: a KEYS entry is never concatenated.
      expect(code(lua)).not.toMatch(/KEYS\[\d+\]\s*\.\./);
      expect(code(lua)).not.toMatch(/\.\.\s*KEYS\[/);
    },
  );

  it('a script that builds a key inside itself is caught', () => {
    const built = `local k = 'hiresync:' .. ARGV[1]\nredis.call('SET', k, '1')`;
    expect(keysTouched(built)).toEqual([{ command: 'SET', key: 'k' }]);
  });
});
