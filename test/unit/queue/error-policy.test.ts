import { describe, expect, it } from 'vitest';
import { AccountUnavailableError } from '../../../src/accounts/account.js';
import { SecretKeyError } from '../../../src/accounts/secret-box.js';
import {
  ApiError,
  AuthError,
  ConfigError,
  CrossOriginLinkError,
  CursorRejectedError,
  DeletionGuardError,
  ForbiddenError,
  PaginationLoopError,
  ReauthorizationRequiredError,
  RedirectedError,
  ResponseTooLargeError,
  RetryAfterTooLongError,
  RunInterruptedError,
  SlotYieldError,
  TransientApiError,
  UnexpectedBodyError,
  UnreachableError,
} from '../../../src/errors.js';
import {
  isUnrecoverable,
  type JobBehaviour,
  jobBehaviourOf,
  RESUME_DELAY_MS,
} from '../../../src/queue/error-policy.js';
import { LockLostError } from '../../../src/redis/redis-lock.js';

const NOW = 1_700_000_000_000;
const api = (Class: typeof ApiError, status: number) =>
  new Class(status, '/v3/jobs', `${status} from /v3/jobs`, '{}');

describe('the error policy: what the queue does with a failed attempt', () => {
  it.each<[string, unknown, JobBehaviour['action']]>([
    // A retry cannot cure these: the run fails at once.
    ['bad configuration', new ConfigError([{ variable: 'HIRESYNC_X', message: 'bad' }]), 'fail'],
    ['a next link to another origin', new CrossOriginLinkError('https://a', 'https://b'), 'fail'],
    ['a pagination loop', new PaginationLoopError('loop'), 'fail'],
    ['a body that is not a list', new UnexpectedBodyError('html'), 'fail'],
    ['a redirect', api(RedirectedError, 302), 'fail'],
    ['the deletion guard', new DeletionGuardError('jobs', 5, 6, 0.5), 'fail'],
    ['sealed credentials no key opens', new SecretKeyError('no key'), 'fail'],
    ['a partner authorization gone', new ReauthorizationRequiredError('acme', 'refused'), 'fail'],
    ['a 401 after a token renewal', api(AuthError, 401), 'fail'],
    ['a 403', api(ForbiddenError, 403), 'fail'],
    ['a 422 on a first page', api(ApiError, 422), 'fail'],
    ['a cursor rejected again after the restart', api(CursorRejectedError, 422), 'fail'],
    ['a 404', api(ApiError, 404), 'fail'],
    // A later attempt may succeed: retried from the checkpoint with backoff.
    ['a 408', api(ApiError, 408), 'retry'],
    ['a 429 that reached the caller', api(ApiError, 429), 'retry'],
    ['a 5xx that outlasted its retries', new TransientApiError('503 x4', 503), 'retry'],
    [
      'a network failure that outlasted its retries',
      new TransientApiError('down', undefined),
      'retry',
    ],
    [
      'a server unreachable on every try',
      new UnreachableError('POST /token failed 6 times (ECONNREFUSED); http://x is unreachable'),
      'retry',
    ],
    ['too large a page', new ResponseTooLargeError('/v3/jobs', 1024, 'grew'), 'retry'],
    [
      'a rate-limit wait past HIRESYNC_MAX_RETRY_AFTER',
      new RetryAfterTooLongError('429 from /v3/jobs', 7_200_000, 3_600_000),
      'retry',
    ],
    ['a lost Redis lock', new LockLostError('lost'), 'retry'],
    [
      'Postgres away',
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      'retry',
    ],
    ['something not an Error', 'boom', 'retry'],
    // Not failures.
    ['an account disabled or removed', new AccountUnavailableError('disabled'), 'skip'],
    ['a run stopped by a shutdown', new RunInterruptedError('stopped'), 'resume-later'],
    ['a slot given up', new SlotYieldError('429 from /v3/jobs', 30_000, NOW), 'yield-slot'],
  ])('%s: %s', (_, error, action) => {
    expect(jobBehaviourOf(error, undefined, NOW).action).toBe(action);
    expect(isUnrecoverable(error)).toBe(action === 'fail');
  });

  it('puts an interrupted run back a second later, spending no attempt', () => {
    expect(jobBehaviourOf(new RunInterruptedError('stopped'), new Error('SIGTERM'), NOW)).toEqual({
      action: 'resume-later',
      at: NOW + RESUME_DELAY_MS,
    });
  });

  it('puts a run stopped to give its slot up back until its rate-limit wait is over', () => {
    const wait = new SlotYieldError('429 from /v3/jobs', 30_000, NOW);
    expect(jobBehaviourOf(new RunInterruptedError('stopped after page 2'), wait, NOW + 5)).toEqual({
      action: 'yield-slot',
      at: NOW + 30_000,
      wait,
    });
  });
});
