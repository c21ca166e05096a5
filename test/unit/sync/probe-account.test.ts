import { describe, expect, it } from 'vitest';
import { ApiError, ForbiddenError } from '../../../src/errors.js';
import type { Page, PageSource } from '../../../src/sync/ports.js';
import { probePassed, probeResources, probeToken } from '../../../src/sync/probe-account.js';

/** A source whose lists each serve two pages, or throw `errors[resource]` on the first. */
function sourceOf(errors: Record<string, Error> = {}) {
  const read: string[] = [];
  const source: PageSource = {
    firstPageUrl: (resource) => `https://api.test/v3/${resource}?per_page=1`,
    pages: async function* (startUrl) {
      const resource = new URL(startUrl).pathname.split('/').at(-1) ?? '';
      for (const number of [1, 2]) {
        read.push(`${resource}#${number}`);
        const error = errors[resource];
        if (error) throw error;
        const page: Page = {
          number,
          url: startUrl,
          records: [{ id: number }],
          body: '[]',
          nextUrl: `${startUrl}&cursor=${number}`,
        };
        yield page;
      }
    },
  };
  return { source, read };
}

describe('probeResources', () => {
  it('reads the first page of each resource only, and says ok', async () => {
    const { source, read } = sourceOf();
    expect(await probeResources(source, ['jobs', 'job_posts'])).toEqual([
      { resource: 'jobs', outcome: 'ok' },
      { resource: 'job_posts', outcome: 'ok' },
    ]);
    expect(read).toEqual(['jobs#1', 'job_posts#1']);
  });

  it('names a 403 not permitted with the scope it lacks, any other error failed, and goes on', async () => {
    const forbidden = new ForbiddenError(
      403,
      '/v3/job_posts',
      "403 from /v3/job_posts: forbidden; not permitted: the credential lacks this list's scope harvest:job_posts:list",
      undefined,
    );
    const broken = new ApiError(500, '/v3/sources', '500 from /v3/sources: boom', undefined);
    const { source } = sourceOf({ job_posts: forbidden, sources: broken });
    expect(await probeResources(source, ['job_posts', 'sources', 'jobs'])).toEqual([
      {
        resource: 'job_posts',
        outcome: 'not_permitted',
        scope: 'harvest:job_posts:list',
        error: forbidden.message,
      },
      { resource: 'sources', outcome: 'failed', error: '500 from /v3/sources: boom' },
      { resource: 'jobs', outcome: 'ok' },
    ]);
  });

  it('stops at an abort instead of reporting it as a resource failure', async () => {
    const controller = new AbortController();
    const aborted = new Error('interrupted');
    controller.abort(aborted);
    const { source } = sourceOf({ jobs: aborted });
    await expect(probeResources(source, ['jobs'], controller.signal)).rejects.toBe(aborted);
  });
});

describe('probeToken and probePassed', () => {
  it('passes only with a token and every resource ok', async () => {
    const token = await probeToken(async () => {});
    expect(token).toEqual({ ok: true });
    expect(probePassed(token, [{ resource: 'jobs', outcome: 'ok' }])).toBe(true);
    expect(
      probePassed(token, [
        { resource: 'jobs', outcome: 'ok' },
        { resource: 'job_posts', outcome: 'not_permitted', scope: 's', error: 'e' },
      ]),
    ).toBe(false);
    const refused = new Error('refused');
    const none = await probeToken(async () => {
      throw refused;
    });
    expect(none).toEqual({ ok: false, error: 'refused', cause: refused });
    expect(probePassed(none, [])).toBe(false);
  });
});
