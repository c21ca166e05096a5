import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/**
 * hiresync's version, from its package.json: the nearest one above this
 * module named `hiresync` (src/ when run from source, dist/src/ when built,
 * /app in the image). `unknown` if there is none.
 */
export function packageVersion(): string {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (pkg.name === 'hiresync' && typeof pkg.version === 'string') {
        cached = pkg.version;
        return cached;
      }
    } catch {
      // No package.json here: look further up.
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  cached = 'unknown';
  return cached;
}
