/**
 * `.env` in the working directory, read by the bin for every command with
 * Node's own parser (util.parseEnv): the variables it sets are the defaults
 * of the environment's, which win over the file where they are not empty
 * (empty is unset). Imports no package, as
 * config/env.ts.
 */
import { lstatSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError } from '../errors.js';
import type { Env } from './types.js';

/** The file every command reads, relative to its working directory. */
export const ENV_FILE = '.env';

/** `NAME=…` or `export NAME=…`: a line of a variable, as Node and a POSIX shell both read it. */
const ASSIGNMENT = /^\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*\s*=(.*)$/;

/**
 * The lines of `text` that set nothing (neither blank, a comment, an
 * assignment, nor a line of a quoted value spanning lines), 1-based: Node's
 * parser skips them in silence, so a typo would go unnoticed.
 */
export function strayLines(text: string): number[] {
  const lines = text.split(/\r?\n/);
  const stray: number[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] ?? '';
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const value = ASSIGNMENT.exec(line)?.[1]?.trim();
    if (value === undefined) {
      stray.push(i + 1);
      continue;
    }
    const quote = value[0];
    if ((quote === '"' || quote === "'" || quote === '`') && value.indexOf(quote, 1) < 0) {
      // A quoted value spanning lines ends at the line holding its closing quote.
      const end = lines.findIndex((later, j) => j > i && later.includes(quote));
      if (end < 0) stray.push(i + 1);
      else i = end;
    }
  }
  return stray;
}

/** Whether `path` is a symbolic link (whether or not its target exists). */
function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * `env` over the variables of `.env` in `dir` (the environment wins, unless
 * it sets a variable empty, which is unset; a file
 * that does not exist adds nothing). An unreadable or malformed file, or a
 * link to a file that does not exist, is a ConfigError naming it, thrown before anything connects.
 */
export function withEnvFile(env: Env, dir: string): Env {
  const path = resolve(dir, ENV_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    // No file adds nothing; a link to a file that is missing (a mount that failed) is an error.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !isLink(path)) return env;
    throw new ConfigError([
      {
        variable: path,
        message:
          code === 'ENOENT'
            ? 'cannot be read (ENOENT): it links to a file that does not exist; make that file (a mount that failed?) or remove the link'
            : `cannot be read (${code ?? (error as Error).message}): fix its permissions or remove it`,
      },
    ]);
  }
  const stray = strayLines(text);
  if (stray.length > 0) {
    throw new ConfigError([
      {
        variable: path,
        message: `line${stray.length > 1 ? 's' : ''} ${stray.join(', ')} set${stray.length > 1 ? '' : 's'} no variable: write NAME=VALUE (quote a value holding spaces, | { } ? or *; # starts a comment)`,
      },
    ]);
  }
  // The environment wins where it sets a value: one set empty is unset, as every loader
  // reads it, and does not hide the file's (a URL of the file's falling back to the live
  // service's would send the file's credentials there).
  const given = Object.entries(env).filter(([, value]) => (value ?? '').trim() !== '');
  return Object.freeze({ ...env, ...parseEnv(text), ...Object.fromEntries(given) });
}
