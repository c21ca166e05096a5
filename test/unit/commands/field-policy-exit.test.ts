import { describe, expect, it } from 'vitest';
import { main } from '../../../src/main.js';
import { captureIo } from '../../support/capture-io.js';

// Nothing answers here: a command that connected would fail otherwise (exit 1).
const ENV = {
  DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
  REDIS_URL: 'redis://127.0.0.1:1',
  HIRESYNC_BASE_URL: 'https://harvest.example.com',
  HIRESYNC_API_KEY: 'key-0123456789',
  HIRESYNC_HASH_KEY: Buffer.alloc(32, 5).toString('base64'),
};

describe('a field policy the resources cannot store', () => {
  it.each([
    [
      'sync',
      'tracking_links.job_id=hash',
      'tracking_links.job_id=hash: tracking_links stores job_id as a typed value',
    ],
    ['worker', 'referrers.name=hash,tracking_links.credited_to.name=drop', 'fill the same column'],
    ['sync', 'jobs.id=drop', "names id, the record's key"],
  ])(
    'makes %s exit 2 before connecting, naming the item (%s)',
    async (command, policy, message) => {
      const io = captureIo();
      expect(await main([command], { ...ENV, HIRESYNC_FIELD_POLICY: policy }, io)).toBe(2);
      expect(io.err()).toContain('HIRESYNC_FIELD_POLICY');
      expect(io.err()).toContain(message);
      expect(io.err()).not.toMatch(/ECONNREFUSED|connect/i);
    },
  );
});
