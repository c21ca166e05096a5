import { describe, expect, it } from 'vitest';
import { keepaliveTickMs } from '../../../src/accounts/keepalive-tick.js';
import { HiresyncError, ReauthorizationRequiredError } from '../../../src/errors.js';
import { keepAlive } from '../../../src/queue/keepalive.js';
import { captureLogger } from '../../support/capture-logger.js';

describe('the partner keep-alive', () => {
  it('ticks a sixth of HIRESYNC_REFRESH_KEEPALIVE, from 1 minute to 1 hour', () => {
    expect(keepaliveTickMs(6 * 3_600_000)).toBe(3_600_000);
    expect(keepaliveTickMs(60 * 60_000)).toBe(10 * 60_000);
    expect(keepaliveTickMs(60_000)).toBe(60_000);
    expect(keepaliveTickMs(7 * 86_400_000)).toBe(3_600_000);
  });

  it("renews every account due; one account's refused or failing refresh never stops the others'", async () => {
    const log = captureLogger('info');
    const renewed: string[] = [];
    const outcome = await keepAlive({
      due: async () => ['alpha', 'revoked', 'flaky', 'beta'],
      renew: async (account) => {
        if (account === 'revoked') {
          throw new ReauthorizationRequiredError(account, 'its refresh token was refused');
        }
        if (account === 'flaky') throw new HiresyncError('token endpoint answered 503');
        renewed.push(account);
      },
      logger: log.logger,
    });
    expect(renewed).toEqual(['alpha', 'beta']);
    expect(outcome).toEqual({ renewed: ['alpha', 'beta'], failed: ['revoked', 'flaky'] });
    const lines = log
      .lines()
      .map((l) => JSON.parse(l) as { level: number; msg: string; account: string });
    expect(lines.map((l) => [l.level, l.account, l.msg])).toEqual([
      [30, 'alpha', 'partner authorization kept alive (refresh token rotated)'],
      [50, 'revoked', 'partner account needs re-authorizing'],
      [40, 'flaky', 'partner keep-alive refresh failed; tried again at the next tick'],
      [30, 'beta', 'partner authorization kept alive (refresh token rotated)'],
    ]);
    expect(log.text()).toContain('hiresync accounts authorize revoked');
  });
});
