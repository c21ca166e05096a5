import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchorsOf, githubSlug, isExternal, linksOf } from '../support/markdown-links.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** README.md and every page under docs/. */
function pages(): string[] {
  const docs = join(ROOT, 'docs');
  const inDocs = existsSync(docs)
    ? readdirSync(docs)
        .filter((name) => name.endsWith('.md'))
        .map((name) => join(docs, name))
    : [];
  return [join(ROOT, 'README.md'), ...inDocs];
}

/**
 * Each relative link of the page that leads nowhere, as `page:line target (why)`.
 * `read` gives a Markdown file's text (the real files, or a test's own).
 */
function brokenLinks(
  page: string,
  read: (path: string) => string | undefined,
  exists: (path: string) => boolean,
): string[] {
  const text = read(page) ?? '';
  const broken: string[] = [];
  for (const { target, line } of linksOf(text)) {
    if (isExternal(target)) continue;
    const where = `${relative(ROOT, page)}:${line} ${target}`;
    const [pathPart = '', anchor] = target.split('#', 2);
    const file = pathPart === '' ? page : resolve(dirname(page), decodeURIComponent(pathPart));
    if (!exists(file)) {
      broken.push(`${where} (no file ${relative(ROOT, file)})`);
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    if (!file.endsWith('.md')) {
      broken.push(`${where} (an anchor into a file that is not Markdown)`);
      continue;
    }
    if (!anchorsOf(read(file) ?? '').has(decodeURIComponent(anchor))) {
      broken.push(`${where} (no heading #${anchor} in ${relative(ROOT, file)})`);
    }
  }
  return broken;
}

const readReal = (path: string) =>
  existsSync(path) && statSync(path).isFile() ? readFileSync(path, 'utf8') : undefined;

describe('links between README.md and docs/', () => {
  it('lead every relative link to a file that exists, and every #anchor to a heading of it', () => {
    const broken = pages().flatMap((page) => brokenLinks(page, readReal, existsSync));
    expect(broken).toEqual([]);
  });

  it('name a missing file, a missing heading and a missing local heading, and skip code and URLs', () => {
    const files: Record<string, string> = {
      [join(ROOT, 'README.md')]: [
        '# hiresync',
        '## Run the tests',
        'See [ok](docs/ops.md#locks-and-leases), [local](#run-the-tests), [web](https://example.com/x.md).',
        'Broken: [file](docs/gone.md), [anchor](docs/ops.md#no-such-part), [here](#nowhere).',
        'In code: `[not a link](docs/gone.md)`.',
        '```md',
        '[in a fence](docs/gone.md)',
        '```',
        '[ref]: docs/also-gone.md',
      ].join('\n'),
      [join(ROOT, 'docs/ops.md')]: '# Ops\n\n## Locks and leases\n',
    };
    const read = (path: string) => files[path];
    const broken = brokenLinks(join(ROOT, 'README.md'), read, (path) => path in files);
    expect(broken).toEqual([
      'README.md:4 docs/gone.md (no file docs/gone.md)',
      'README.md:4 docs/ops.md#no-such-part (no heading #no-such-part in docs/ops.md)',
      'README.md:4 #nowhere (no heading #nowhere in README.md)',
      'README.md:9 docs/also-gone.md (no file docs/also-gone.md)',
    ]);
  });

  it("slug headings by GitHub's rule: code and punctuation dropped, spaces to hyphens, repeats numbered", () => {
    expect(githubSlug('`hiresync sync` runs only its own runs')).toBe(
      'hiresync-sync-runs-only-its-own-runs',
    );
    expect(githubSlug('Accounts: `hiresync.accounts` and `all_accounts`')).toBe(
      'accounts-hiresyncaccounts-and-all_accounts',
    );
    expect(githubSlug('Against the live service (v3)')).toBe('against-the-live-service-v3');
    expect(githubSlug('Rows hidden by default: extra walks')).toBe(
      'rows-hidden-by-default-extra-walks',
    );
    expect(githubSlug('Secrets, schedules and mass deletions')).toBe(
      'secrets-schedules-and-mass-deletions',
    );
    expect(githubSlug('What **is** [kept](x.md)')).toBe('what-is-kept');
    expect([...anchorsOf('## Usage\n### Usage\n```\n# Usage\n```\n## Usage')]).toEqual([
      'usage',
      'usage-1',
      'usage-2',
    ]);
  });
});
