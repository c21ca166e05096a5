import type { ApiSimulator } from '../../src/simulator/api-simulator.js';
import { grantRefreshToken as grant } from '../../src/simulator/partner-browser.js';

/**
 * A customer of the simulator approves the partner app, whose own web app
 * exchanges the code (authorization code grant): the refresh token hiresync
 * is then given (`accounts add --partner`).
 */
export function grantRefreshToken(sim: ApiSimulator, account = 'acme'): Promise<string> {
  return grant(sim, account);
}
