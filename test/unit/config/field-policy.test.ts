import { describe, expect, it } from 'vitest';
import { loadConfig, recordPolicyOf } from '../../../src/config/load-config.js';
import { ConfigError } from '../../../src/errors.js';
import { resolvePolicy } from '../../../src/privacy/policy-targets.js';
import { BUILT_IN_RESOURCES, RESOURCE_NAMES } from '../../../src/resources/index.js';

const KEY = Buffer.alloc(32, 1).toString('base64');

/** Problems of the variables, then of the policy against the built-in resources (as createApp resolves it). */
function problems(env: Record<string, string>): string[] {
  const { fieldPolicy, problems: read } = recordPolicyOf(env);
  if (read.length > 0 || !fieldPolicy) return read.map((p) => `${p.variable} ${p.message}`);
  const resolved = resolvePolicy(fieldPolicy, BUILT_IN_RESOURCES);
  return 'problems' in resolved ? resolved.problems.map((m) => `HIRESYNC_FIELD_POLICY ${m}`) : [];
}

describe('HIRESYNC_FIELD_POLICY with HIRESYNC_HASH_KEY', () => {
  it('requires HIRESYNC_HASH_KEY when an action hashes, and not when all drop', () => {
    expect(problems({ HIRESYNC_FIELD_POLICY: 'jobs.notes=hash' })).toEqual([
      expect.stringMatching(/^HIRESYNC_HASH_KEY is required: HIRESYNC_FIELD_POLICY hashes values/),
    ]);
    expect(problems({ HIRESYNC_FIELD_POLICY: 'jobs.notes=drop' })).toEqual([]);
  });

  it('refuses a hash key that is not 32 bytes, without quoting it', () => {
    const [problem] = problems({
      HIRESYNC_FIELD_POLICY: 'jobs.notes=hash',
      HIRESYNC_HASH_KEY: 'short-key',
    });
    expect(problem).toMatch(/^HIRESYNC_HASH_KEY must be one key of 32 bytes/);
    expect(problem).not.toContain('short-key');
  });

  it('refuses a hash of a key a resource stores as a typed value, and says to drop it', () => {
    expect(
      problems({ HIRESYNC_FIELD_POLICY: 'tracking_links.job_id=hash', HIRESYNC_HASH_KEY: KEY }),
    ).toEqual([
      expect.stringMatching(
        /^HIRESYNC_FIELD_POLICY tracking_links.job_id=hash: tracking_links stores job_id as a typed value .*drop it instead$/,
      ),
    ]);
    expect(problems({ HIRESYNC_FIELD_POLICY: 'tracking_links.job_id=drop' })).toEqual([]);
  });

  it('mirrors a reference column onto the objects tracking links nest, and back', () => {
    const { fieldPolicy: read } = recordPolicyOf({
      HIRESYNC_FIELD_POLICY: 'referrers.name=hash,tracking_links.source.public_name=drop',
      HIRESYNC_HASH_KEY: KEY,
    });
    const resolved = read && resolvePolicy(read, BUILT_IN_RESOURCES);
    const fieldPolicy = resolved && 'policy' in resolved ? resolved.policy : undefined;
    expect(fieldPolicy?.policy.describe('tracking_links')).toBe(
      'credited_to.name=hash,source.public_name=drop',
    );
    expect(fieldPolicy?.policy.describe('sources')).toBe('name=drop');
  });

  it('refuses two actions for one reference column', () => {
    expect(
      problems({
        HIRESYNC_FIELD_POLICY: 'referrers.name=hash,tracking_links.credited_to.name=drop',
        HIRESYNC_HASH_KEY: KEY,
      }),
    ).toEqual([expect.stringContaining('fill the same column: give them the same action')]);
  });

  it('names the item of a policy that cannot be read', () => {
    expect(problems({ HIRESYNC_FIELD_POLICY: 'candidates.email=scramble' })).toEqual([
      'HIRESYNC_FIELD_POLICY item "candidates.email=scramble" has the action "scramble": use drop or hash',
    ]);
  });

  it('refuses a hash that its mirror would apply to a key the other place stores typed', () => {
    // tracking_links' credited_to has no typed user_id, but referrers (the same rows) do.
    expect(
      problems({
        HIRESYNC_FIELD_POLICY: 'tracking_links.credited_to.user_id=hash',
        HIRESYNC_HASH_KEY: KEY,
      }),
    ).toEqual([
      expect.stringMatching(
        /^HIRESYNC_FIELD_POLICY tracking_links.credited_to.user_id=hash: .*referrers.user_id.* typed value .*drop it instead$/,
      ),
    ]);
    expect(problems({ HIRESYNC_FIELD_POLICY: 'tracking_links.credited_to.user_id=drop' })).toEqual(
      [],
    );
  });

  it('refuses an item whose resource could be no resource hiresync syncs, naming it', () => {
    const env = {
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      REDIS_URL: 'redis://127.0.0.1:1',
      HIRESYNC_BASE_URL: 'https://harvest.example.com',
      HIRESYNC_API_KEY: 'key-0123456789',
    };
    for (const resource of [
      'Candidates',
      'tracking-links',
      'candidates_data',
      'rejected_records',
    ]) {
      const load = () =>
        loadConfig({ ...env, HIRESYNC_FIELD_POLICY: `${resource}.emails=drop` }, RESOURCE_NAMES);
      expect(load).toThrow(ConfigError);
      expect(load).toThrow(new RegExp(`HIRESYNC_FIELD_POLICY.*${resource}`));
    }
    // A list resource the API may serve (stored as sent), and the built-in ones, are fine.
    for (const resource of ['candidates', 'job_boards', 'tracking_links']) {
      expect(() =>
        loadConfig({ ...env, HIRESYNC_FIELD_POLICY: `${resource}.notes=drop` }, RESOURCE_NAMES),
      ).not.toThrow();
    }
  });
});
