import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/status/metrics.js';

describe('a scrape of /metrics', () => {
  const metrics = new Metrics({ defaultMetrics: false });

  it('is gzipped only when the scraper accepts gzip with a q above 0', async () => {
    for (const accepted of ['gzip', 'GZIP', 'deflate, gzip;q=1.0', 'gzip;q=0.5, identity']) {
      const scrape = await metrics.scrape(accepted);
      expect(scrape.headers['content-encoding'], accepted).toBe('gzip');
      expect(gunzipSync(scrape.body).toString('utf8')).toContain('hiresync_build_info');
    }
    for (const refused of [
      undefined,
      '',
      'identity',
      'gzip;q=0',
      'gzip; q=0.000',
      'deflate, gzip;q=0, br',
      '*;q=0',
      '*, gzip;q=0',
      'x-gzipped',
    ]) {
      const scrape = await metrics.scrape(refused);
      expect(scrape.headers['content-encoding'], String(refused)).toBeUndefined();
      expect(String(scrape.body)).toContain('hiresync_build_info');
    }
  });
});
