import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { lintStatement } from '../support/statement-lint.js';

/**
 * Every statement the engine can send, from each corpus of
 * test/unit/statements (`*.statements.ts`, each exporting `statements`:
 * `{ name, sql }`), names the shared tables with the account bound, every
 * relation qualified, and calls only pg_catalog's functions unqualified (see
 * test/support/statement-lint.ts for the rules).
 */
const folder = fileURLToPath(new URL('./statements/', import.meta.url));
const corpora = readdirSync(folder)
  .filter((file) => file.endsWith('.statements.ts'))
  .sort();

describe('every statement the engine sends', () => {
  it('comes from at least one corpus', () => {
    expect(corpora).toContain('run-path.statements.ts');
  });

  for (const file of corpora) {
    it(`of ${file} binds the account, names every relation with its schema and calls only pg_catalog's functions unqualified`, async () => {
      const { statements } = (await import(`./statements/${file}`)) as {
        statements: ReadonlyArray<{ name: string; sql: string }>;
      };
      expect(statements.length).toBeGreaterThan(0);
      const problems: string[] = [];
      for (const { name, sql } of statements) {
        for (const problem of await lintStatement(sql)) problems.push(`${name}: ${problem}`);
      }
      expect(problems).toEqual([]);
    });
  }
});
