import type { AuthConfig } from '../../config/types.js';

/** How `accounts` output names an auth mode. */
export function describeAuthMode(mode: AuthConfig['mode']): string {
  return mode === 'client_credentials'
    ? 'client credentials'
    : mode === 'api_key'
      ? 'API key'
      : 'partner authorization';
}
