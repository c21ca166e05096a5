import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

/** The versions the changelog's `## [...]` headings name, newest first. */
function changelogVersions(): string[] {
  return [...read('CHANGELOG.md').matchAll(/^## \[([^\]]+)\]/gm)].map((m) => m[1] ?? '');
}

describe('the changelog', () => {
  it("names package.json's version as its newest, below the changes not yet released", () => {
    const { version } = JSON.parse(read('package.json')) as { version: string };
    const [unreleased, newest] = changelogVersions();
    expect(unreleased).toBe('Unreleased');
    expect(newest).toBe(version);
  });

  it('dates each version it names', () => {
    const headings = [...read('CHANGELOG.md').matchAll(/^## \[(\d[^\]]*)\](.*)$/gm)];
    expect(headings.length).toBeGreaterThan(0);
    for (const [heading, , rest] of headings) expect(rest, heading).toMatch(/^ - \d{4}-\d\d-\d\d$/);
  });
});
