import type { ConfigProblem } from '../errors.js';
import { Secret } from '../secret.js';
import { apiUrl } from './fields.js';
import { defaultAuthUrlFor } from './live-defaults.js';
import type { Env, PartnerConfig } from './types.js';

/**
 * The partner app of the environment: HIRESYNC_PARTNER_CLIENT_ID and
 * HIRESYNC_PARTNER_CLIENT_SECRET (both, or neither: no partner app),
 * HIRESYNC_AUTHORIZE_URL (default HIRESYNC_AUTH_URL + /authorize, same https
 * rule; HIRESYNC_AUTH_URL's default is the live service's, with the live API only) and HIRESYNC_PARTNER_SCOPE. Problems are returned, never thrown, so
 * each loader reports them with its own.
 */
export function readPartner(env: Env): {
  partner: PartnerConfig | undefined;
  problems: ConfigProblem[];
} {
  const text = (name: string) => (env[name] ?? '').trim() || undefined;
  const clientId = text('HIRESYNC_PARTNER_CLIENT_ID');
  const clientSecret = text('HIRESYNC_PARTNER_CLIENT_SECRET');
  const problems: ConfigProblem[] = [];
  if ((clientId === undefined) !== (clientSecret === undefined)) {
    problems.push({
      variable:
        clientId === undefined ? 'HIRESYNC_PARTNER_CLIENT_ID' : 'HIRESYNC_PARTNER_CLIENT_SECRET',
      message:
        "is required with the other half of the partner app's credentials (HIRESYNC_PARTNER_CLIENT_ID and HIRESYNC_PARTNER_CLIENT_SECRET)",
    });
  }
  if (clientId === undefined || clientSecret === undefined) return { partner: undefined, problems };
  const url = (variable: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    const result = apiUrl(variable).safeParse(value);
    if (result.success) return result.data;
    problems.push(...result.error.issues.map((i) => ({ variable, message: i.message })));
    return undefined;
  };
  const explicit = url('HIRESYNC_AUTHORIZE_URL', text('HIRESYNC_AUTHORIZE_URL'));
  const authUrl =
    text('HIRESYNC_AUTHORIZE_URL') === undefined
      ? url(
          'HIRESYNC_AUTH_URL',
          text('HIRESYNC_AUTH_URL') ?? defaultAuthUrlFor(text('HIRESYNC_BASE_URL')),
        )
      : undefined;
  if (problems.length > 0) return { partner: undefined, problems };
  return {
    partner: Object.freeze({
      clientId,
      clientSecret: new Secret(clientSecret),
      authorizeUrl: explicit ?? (authUrl === undefined ? undefined : `${authUrl}/authorize`),
      scope: text('HIRESYNC_PARTNER_SCOPE'),
    }),
    problems,
  };
}
