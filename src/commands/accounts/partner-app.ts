import { readPartner } from '../../config/partner.js';
import type { Env, PartnerConfig } from '../../config/types.js';
import { ConfigError, type ConfigProblem } from '../../errors.js';

/**
 * The partner app of the environment (HIRESYNC_PARTNER_CLIENT_ID and
 * HIRESYNC_PARTNER_CLIENT_SECRET, HIRESYNC_AUTHORIZE_URL, HIRESYNC_PARTNER_SCOPE;
 * see readPartner), required to `why`. Every problem is thrown at once as a
 * ConfigError (exit 2), before anything connects.
 */
export function loadPartnerApp(env: Env, why: string): PartnerConfig {
  const { partner, problems } = readPartner(env);
  const all: ConfigProblem[] = [...problems];
  if (!partner && problems.length === 0) {
    for (const variable of ['HIRESYNC_PARTNER_CLIENT_ID', 'HIRESYNC_PARTNER_CLIENT_SECRET']) {
      all.push({
        variable,
        message: `is required to ${why} (the partner app's credentials, shared by every partner account)`,
      });
    }
  }
  if (all.length > 0 || !partner) throw new ConfigError(all);
  return partner;
}

/**
 * The authorize endpoint of an account whose token service is `authUrl`:
 * HIRESYNC_AUTHORIZE_URL when set, else `authUrl` + `/authorize` (the
 * account's own token service, which --auth-url may name).
 */
export function authorizeEndpoint(env: Env, partner: PartnerConfig, authUrl: string): string {
  const explicit = (env.HIRESYNC_AUTHORIZE_URL ?? '').trim() !== '';
  return explicit && partner.authorizeUrl !== undefined
    ? partner.authorizeUrl
    : `${authUrl}/authorize`;
}
