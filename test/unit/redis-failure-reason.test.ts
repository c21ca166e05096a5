import { describe, expect, it } from 'vitest';
import { redisFailureReason } from '../../src/redis/redis-error.js';

/** An error as Node's net module makes one: a code, and a message that names it. */
function refused(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
}

describe('redisFailureReason', () => {
  it('names a Cluster node’s own error where ioredis says only that the slots could not be read', () => {
    const all = Object.assign(new Error('Failed to refresh slots cache.'), {
      lastNodeError: new Error('WRONGPASS invalid username-password pair or user is disabled.'),
    });
    expect(redisFailureReason(all)).toBe(
      'WRONGPASS invalid username-password pair or user is disabled.',
    );
  });

  it('says a code its message already names once, and adds one it does not', () => {
    expect(redisFailureReason(refused())).toBe('connect ECONNREFUSED 127.0.0.1:1');
    const timeout = Object.assign(new Error('connect timed out'), { code: 'ETIMEDOUT' });
    expect(redisFailureReason(timeout)).toBe('ETIMEDOUT: connect timed out');
  });

  it('reads anything thrown, not only errors', () => {
    expect(redisFailureReason('gone')).toBe('gone');
  });
});
