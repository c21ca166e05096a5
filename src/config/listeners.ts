import { isIP } from 'node:net';
import { z } from 'zod';
import type { ConfigProblem } from '../errors.js';
import { integer } from './fields.js';
import type { Env, Listeners } from './types.js';

/** An RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens. */
const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** A listener's host: an IPv4 or IPv6 address (brackets allowed) or a host name; blank is `fallback`. */
function listenHost(fallback: string) {
  return z
    .string()
    .optional()
    .transform((text, ctx) => {
      const value = text?.trim() ?? '';
      if (value === '') return fallback;
      const bare = value.replace(/^\[(.*)\]$/, '$1');
      if (isIP(bare) !== 0 || (bare === value && HOST_NAME.test(value))) return bare;
      ctx.addIssue({
        code: 'custom',
        message: `must be an IP address (such as 127.0.0.1, 0.0.0.0 or ::1) or a host name, got ${JSON.stringify(text)}`,
      });
      return z.NEVER;
    });
}

/**
 * `HIRESYNC_HTTP_PORT`, `HIRESYNC_HTTP_HOST`, `HIRESYNC_PUBLIC_PORT` and
 * `HIRESYNC_PUBLIC_HOST` (see {@link Listeners}). Problems are returned,
 * never thrown, so that loadConfig reports them with its own: a port out of
 * range, a host that is neither an address nor a name, the public port
 * equal to the HTTP port, or HIRESYNC_PUBLIC_HOST without HIRESYNC_PUBLIC_PORT.
 */
export function readListeners(env: Env): { listeners: Listeners; problems: ConfigProblem[] } {
  const hasPublic = (env.HIRESYNC_PUBLIC_PORT ?? '').trim() !== '';
  const parsed = z
    .object({
      HIRESYNC_HTTP_PORT: integer(9464, 0, 65535),
      HIRESYNC_HTTP_HOST: listenHost(hasPublic ? '127.0.0.1' : '0.0.0.0'),
      HIRESYNC_PUBLIC_PORT: integer(0, 0, 65535),
      HIRESYNC_PUBLIC_HOST: listenHost('0.0.0.0'),
    })
    .safeParse(env);
  const fallback: Listeners = { http: { port: 9464, host: '0.0.0.0' }, public: undefined };
  if (!parsed.success) {
    return {
      listeners: fallback,
      problems: parsed.error.issues.map((issue) => ({
        variable: String(issue.path[0] ?? 'environment'),
        message: issue.message,
      })),
    };
  }
  const v = parsed.data;
  const problems: ConfigProblem[] = [];
  if (
    hasPublic &&
    v.HIRESYNC_PUBLIC_PORT !== 0 &&
    v.HIRESYNC_PUBLIC_PORT === v.HIRESYNC_HTTP_PORT
  ) {
    problems.push({
      variable: 'HIRESYNC_PUBLIC_PORT',
      message: `is HIRESYNC_HTTP_PORT's port (${v.HIRESYNC_HTTP_PORT}): the public listener needs a port of its own (or unset HIRESYNC_PUBLIC_PORT to serve everything on HIRESYNC_HTTP_PORT)`,
    });
  }
  if (!hasPublic && (env.HIRESYNC_PUBLIC_HOST ?? '').trim() !== '') {
    problems.push({
      variable: 'HIRESYNC_PUBLIC_HOST',
      message:
        'applies only to the public listener, and HIRESYNC_PUBLIC_PORT is not set: set HIRESYNC_PUBLIC_PORT too, or unset HIRESYNC_PUBLIC_HOST',
    });
  }
  return {
    listeners: {
      http: { port: v.HIRESYNC_HTTP_PORT, host: v.HIRESYNC_HTTP_HOST },
      public: hasPublic
        ? { port: v.HIRESYNC_PUBLIC_PORT, host: v.HIRESYNC_PUBLIC_HOST }
        : undefined,
    },
    problems,
  };
}
