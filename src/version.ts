import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * hiresync's version, from its package.json: the nearest one above this
 * module named `hiresync` (src/ in a checkout, dist/src/ after a build, the
 * Docker image's /app/dist/src). Read when first asked, not on import.
 */
let cached: { root: string; version: string } | undefined;

export function readVersion(): string {
  return readManifest().version;
}

/** The folder of hiresync's package.json: the checkout, or where hiresync is installed. */
export function packageRoot(): string {
  return readManifest().root;
}

function readManifest(): { root: string; version: string } {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (manifest.name === 'hiresync' && typeof manifest.version === 'string') {
        cached = { root: dir, version: manifest.version };
        return cached;
      }
    } catch (error) {
      if ((error as { code?: string }).code !== 'ENOENT') throw error;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error("hiresync's package.json is missing: reinstall hiresync");
    dir = parent;
  }
}
