import type { ConfigProblem } from '../errors.js';
import { apiUrl } from './fields.js';
import type { Env } from './types.js';

/**
 * `HIRESYNC_PUBLIC_URL`: the public base URL of the worker's HTTP server
 * (connect links are `HIRESYNC_PUBLIC_URL/connect/<token>`, the redirect URI
 * registered with the vendor `HIRESYNC_PUBLIC_URL/oauth/callback`). The rule
 * of HIRESYNC_BASE_URL: https unless the host is loopback; no query,
 * fragment or credentials; read without its trailing slashes. Undefined when
 * blank. Problems are returned, never thrown, so each loader reports them
 * with its own; with `requiredTo`, a blank value is one ("is required to …").
 */
export function readPublicUrl(
  env: Env,
  requiredTo?: string,
): { publicUrl: string | undefined; problems: ConfigProblem[] } {
  const variable = 'HIRESYNC_PUBLIC_URL';
  const text = (env[variable] ?? '').trim();
  if (text === '') {
    return {
      publicUrl: undefined,
      problems:
        requiredTo === undefined
          ? []
          : [
              {
                variable,
                message: `is required to ${requiredTo} (the public base URL of the worker's HTTP server, e.g. https://hiresync.example.com)`,
              },
            ],
    };
  }
  const result = apiUrl(variable).safeParse(text);
  if (result.success) return { publicUrl: result.data, problems: [] };
  return {
    publicUrl: undefined,
    problems: result.error.issues.map((i) => ({ variable, message: i.message })),
  };
}
