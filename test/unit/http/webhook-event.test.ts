import { describe, expect, it } from 'vitest';
import {
  parseWebhookEvent,
  planWebhookEvent,
  resourceOfAction,
  type WebhookEvent,
} from '../../../src/http/webhook-event.js';

const event = (text: string): WebhookEvent => {
  const parsed = parseWebhookEvent(Buffer.from(text));
  if ('problem' in parsed) throw new Error(parsed.problem);
  return parsed;
};

const ALL = ['jobs', 'job_posts', 'candidates', 'applications', 'offers', 'tracking_links'];

describe('webhook payloads', () => {
  it('reads the action and the payload, integers exactly, beyond 2^53 too', () => {
    const parsed = event(
      '{"action":"job_deleted","payload":{"job":{"id":9007199254740993,"name":"Caf\\u00e9"}}}',
    );
    expect(parsed.action).toBe('job_deleted');
    expect(planWebhookEvent(parsed, ALL)).toEqual({
      kind: 'delete',
      deletions: [{ resource: 'jobs', ids: ['9007199254740993'] }],
      notSynced: [],
    });
  });

  it('says what is wrong with a body that is not an event', () => {
    for (const [text, problem] of [
      ['not json', 'the body is not JSON'],
      ['[1,2]', 'the body has no action'],
      ['{"payload":{}}', 'the body has no action'],
      ['{"action":"Job Deleted"}', 'the body has no action'],
      ['{"action":42}', 'the body has no action'],
    ] as const) {
      const parsed = parseWebhookEvent(Buffer.from(text));
      expect('problem' in parsed && parsed.problem, text).toContain(problem);
    }
  });

  it('delete_candidate deletes the person from candidates and its deleted_application_ids from applications', () => {
    const parsed = event(
      JSON.stringify({
        action: 'delete_candidate',
        payload: {
          person: {
            id: 37031511,
            first_name: 'Jack',
            deleted_application_ids: [46196263, 46196258, 46196263],
          },
        },
      }),
    );
    expect(planWebhookEvent(parsed, ALL)).toEqual({
      kind: 'delete',
      deletions: [
        { resource: 'candidates', ids: ['37031511'] },
        { resource: 'applications', ids: ['46196263', '46196258'] },
      ],
      notSynced: [],
    });
  });

  it('a merge (no application ids) deletes the candidate alone', () => {
    for (const ids of ['[]', 'null']) {
      const parsed = event(
        `{"action":"delete_candidate","payload":{"person":{"id":5,"deleted_application_ids":${ids}}}}`,
      );
      expect(planWebhookEvent(parsed, ALL)).toMatchObject({
        kind: 'delete',
        deletions: [{ resource: 'candidates', ids: ['5'] }],
      });
    }
  });

  it('a delete of resources the account does not sync deletes what it syncs, or nothing', () => {
    const parsed = event(
      '{"action":"delete_candidate","payload":{"person":{"id":5,"deleted_application_ids":[6]}}}',
    );
    expect(planWebhookEvent(parsed, ['jobs', 'applications'])).toEqual({
      kind: 'delete',
      deletions: [{ resource: 'applications', ids: ['6'] }],
      notSynced: ['candidates'],
    });
    expect(planWebhookEvent(parsed, ['jobs'])).toEqual({
      kind: 'ignore',
      reason: 'the account does not sync candidates or applications',
    });
    expect(
      planWebhookEvent(
        event('{"action":"job_post_deleted","payload":{"job_post":{"id":258341}}}'),
        ['jobs'],
      ),
    ).toEqual({ kind: 'ignore', reason: 'the account does not sync job_posts' });
  });

  it('reads job_post_deleted from payload.job_post.id, and ids given as digit strings', () => {
    expect(
      planWebhookEvent(
        event(
          '{"action":"job_post_deleted","payload":{"job_post":{"id":"258341","job_id":284999}}}',
        ),
        ALL,
      ),
    ).toMatchObject({ kind: 'delete', deletions: [{ resource: 'job_posts', ids: ['258341'] }] });
  });

  it('takes a plain number as an id only when it is exact (a safe integer)', () => {
    expect(
      planWebhookEvent({ action: 'job_deleted', payload: { job: { id: 209256 } } }, ALL),
    ).toEqual({
      kind: 'delete',
      deletions: [{ resource: 'jobs', ids: ['209256'] }],
      notSynced: [],
    });
    expect(
      planWebhookEvent({ action: 'job_deleted', payload: { job: { id: 2 ** 60 } } }, ALL),
    ).toEqual({ problem: 'payload.job.id is not an id' });
  });

  it('refuses a delete event whose id is missing or not a positive integer', () => {
    for (const [text, where] of [
      ['{"action":"job_deleted","payload":{"job":{}}}', 'payload.job.id'],
      ['{"action":"job_deleted","payload":{}}', 'payload.job.id'],
      ['{"action":"job_deleted","payload":{"job":{"id":1.5}}}', 'payload.job.id'],
      ['{"action":"job_deleted","payload":{"job":{"id":-3}}}', 'payload.job.id'],
      ['{"action":"job_deleted","payload":{"job":{"id":"12; drop"}}}', 'payload.job.id'],
      ['{"action":"job_deleted","payload":{"job":{"id":99999999999999999999}}}', 'payload.job.id'],
      [
        '{"action":"delete_candidate","payload":{"person":{"id":1,"deleted_application_ids":[2,"x"]}}}',
        'payload.person.deleted_application_ids',
      ],
      [
        '{"action":"delete_candidate","payload":{"person":{"id":1,"deleted_application_ids":7}}}',
        'payload.person.deleted_application_ids',
      ],
    ] as const) {
      const plan = planWebhookEvent(event(text), ALL);
      expect('problem' in plan && plan.problem, text).toContain(where);
    }
  });
});

describe('the resource an action names', () => {
  it.each([
    ['job_updated', 'jobs'],
    ['job_created', 'jobs'],
    ['job_approved', 'jobs'],
    ['job_post_created', 'job_posts'],
    ['job_post_updated', 'job_posts'],
    ['update_candidate', 'candidates'],
    ['merge_candidate', 'candidates'],
    ['candidate_anonymized', 'candidates'],
    ['candidate_hired', 'candidates'],
    ['prospect_created', 'candidates'],
    ['application_updated', 'applications'],
    ['delete_application', 'applications'],
    ['hire_candidate', 'applications'],
    ['reject_candidate', 'applications'],
    ['candidate_stage_change', 'applications'],
    ['new_candidate_application', 'applications'],
    ['new_prospect_application', 'applications'],
    ['offer_updated', 'offers'],
    ['offer_deleted', 'offers'],
  ])('%s queues a run of %s', (action, resource) => {
    expect(resourceOfAction(action, ALL)).toBe(resource);
    expect(planWebhookEvent({ action, payload: {} }, ALL)).toEqual({ kind: 'run', resource });
  });

  it("reads an action named like a property every object has as naming nothing, never as the object's", () => {
    for (const action of ['constructor', 'constructor_updated']) {
      expect(planWebhookEvent({ action, payload: {} }, ALL)).toEqual({
        kind: 'ignore',
        reason: `${action} names no resource the account syncs`,
      });
    }
  });

  it('names only resources the account syncs', () => {
    expect(resourceOfAction('job_post_updated', ['jobs'])).toBeUndefined();
    expect(resourceOfAction('hire_candidate', ['candidates'])).toBeUndefined();
    expect(resourceOfAction('interview_deleted', ALL)).toBeUndefined();
    expect(resourceOfAction('interview_deleted', [...ALL, 'scheduled_interviews'])).toBe(
      'scheduled_interviews',
    );
    expect(resourceOfAction('department_deleted', [...ALL, 'departments'])).toBe('departments');
    expect(resourceOfAction('office_deleted', ALL)).toBeUndefined();
    expect(resourceOfAction('ping', ALL)).toBeUndefined();
    expect(resourceOfAction('activity_feed_updated', ['activities', 'activity_feeds'])).toBe(
      'activity_feeds',
    );
    expect(planWebhookEvent({ action: 'ping', payload: {} }, ALL)).toEqual({
      kind: 'ignore',
      reason: 'ping names no resource the account syncs',
    });
  });
});
