import { readFileSync } from 'node:fs';
import type { RedisConnection } from './connect.js';

/** A Lua script of scripts/, named `<name>-<numkeys>.lua` (BullMQ's convention). */
export interface ScriptFile {
  /** The ioredis command it becomes, e.g. `hiresyncRenewLock`. */
  command: string;
  /** The file in scripts/, e.g. `renew-lock-1.lua`. */
  file: string;
}

const texts = new Map<string, string>();
const defined = new WeakMap<RedisConnection, Set<string>>();

function numberOfKeys(file: string): number {
  const match = /-(\d+)\.lua$/.exec(file);
  if (!match?.[1]) throw new Error(`script ${file} does not end in -<numkeys>.lua`);
  return Number(match[1]);
}

/**
 * Defines the scripts as commands on `redis`, once per connection: ioredis
 * sends a script's text the first time on each socket, then only its SHA
 * (EVALSHA). Returns the connection, typed with the commands.
 */
export function withScripts<T>(
  redis: RedisConnection,
  scripts: readonly ScriptFile[],
): RedisConnection & T {
  let names = defined.get(redis);
  if (!names) {
    names = new Set();
    defined.set(redis, names);
  }
  for (const { command, file } of scripts) {
    if (names.has(command)) continue;
    let lua = texts.get(file);
    if (lua === undefined) {
      lua = readFileSync(new URL(`./scripts/${file}`, import.meta.url), 'utf8');
      texts.set(file, lua);
    }
    redis.defineCommand(command, { numberOfKeys: numberOfKeys(file), lua });
    names.add(command);
  }
  return redis as RedisConnection & T;
}
