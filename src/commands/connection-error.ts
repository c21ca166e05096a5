const KNOWN_CAUSES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  '28P01': 'password authentication failed',
  '28000': 'authentication rejected',
  '3D000': 'database does not exist',
};

/**
 * Explains a failure to reach Postgres or Redis in terms of the variable to
 * check; undefined when the error's code is not one of the known causes.
 */
export function describeConnectionError(error: unknown, variable: string): string | undefined {
  const code = (error as { code?: unknown }).code;
  const what = typeof code === 'string' ? KNOWN_CAUSES[code] : undefined;
  return what ? `cannot connect (${what}): check ${variable}` : undefined;
}
