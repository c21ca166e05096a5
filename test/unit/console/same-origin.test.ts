import { describe, expect, it } from 'vitest';
import { crossOriginRefusal } from '../../../src/console/same-origin.js';

describe('the same-origin check of the console', () => {
  it("takes a form sent from the server's own Host, over http or https", () => {
    expect(
      crossOriginRefusal({ origin: 'http://127.0.0.1:9464', host: '127.0.0.1:9464' }, undefined),
    ).toBeUndefined();
    expect(
      crossOriginRefusal(
        { origin: 'https://sync.example.com', host: 'sync.example.com' },
        undefined,
      ),
    ).toBeUndefined();
    expect(
      crossOriginRefusal(
        { origin: 'https://sync.example.com', host: 'sync.example.com:443' },
        undefined,
      ),
    ).toBeUndefined();
  });

  it('takes a form sent from HIRESYNC_PUBLIC_URL behind a proxy that rewrites the Host', () => {
    expect(
      crossOriginRefusal(
        { origin: 'https://sync.example.com', host: '10.0.0.7:9464' },
        'https://sync.example.com/hiresync',
      ),
    ).toBeUndefined();
  });

  it('refuses a form sent from another site, naming its origin', () => {
    expect(
      crossOriginRefusal(
        { origin: 'https://evil.example', host: '127.0.0.1:9464' },
        'https://sync.example.com',
      ),
    ).toBe('it was sent from another site (Origin https://evil.example), not from this console');
    expect(
      crossOriginRefusal({ origin: 'http://127.0.0.1:9465', host: '127.0.0.1:9464' }, undefined),
    ).toMatch(/another site/);
    expect(
      crossOriginRefusal(
        { origin: 'https://sync.example.com.evil.example', host: 'sync.example.com' },
        undefined,
      ),
    ).toMatch(/another site/);
  });

  it("takes Origin null from the console's own page, whose browser says Sec-Fetch-Site: same-origin (it sends no referrer)", () => {
    expect(
      crossOriginRefusal(
        { origin: 'null', host: '127.0.0.1:9464', 'sec-fetch-site': 'same-origin' },
        undefined,
      ),
    ).toBeUndefined();
  });

  it('refuses Origin null from anywhere else (a sandboxed page, a data: URL) and a malformed Origin', () => {
    expect(crossOriginRefusal({ origin: 'null', host: '127.0.0.1:9464' }, undefined)).toMatch(
      /anonymous page \(Origin null/,
    );
    expect(
      crossOriginRefusal(
        { origin: 'null', host: '127.0.0.1:9464', 'sec-fetch-site': 'cross-site' },
        undefined,
      ),
    ).toMatch(/another site/);
    expect(crossOriginRefusal({ origin: 'not a url', host: '127.0.0.1:9464' }, undefined)).toMatch(
      /another site/,
    );
  });

  it('refuses a matching Origin that the browser marks as cross-site', () => {
    expect(
      crossOriginRefusal(
        { origin: 'http://127.0.0.1:9464', host: '127.0.0.1:9464', 'sec-fetch-site': 'cross-site' },
        undefined,
      ),
    ).toMatch(/Sec-Fetch-Site cross-site/);
  });

  it('refuses a request without Origin that the browser marks as cross-site', () => {
    expect(
      crossOriginRefusal({ host: '127.0.0.1:9464', 'sec-fetch-site': 'cross-site' }, undefined),
    ).toMatch(/Sec-Fetch-Site cross-site/);
    expect(
      crossOriginRefusal({ host: '127.0.0.1:9464', 'sec-fetch-site': 'same-site' }, undefined),
    ).toMatch(/another site/);
    expect(
      crossOriginRefusal({ host: '127.0.0.1:9464', 'sec-fetch-site': 'same-origin' }, undefined),
    ).toBeUndefined();
  });

  it('leaves a request with neither header to the form token', () => {
    expect(crossOriginRefusal({ host: '127.0.0.1:9464' }, undefined)).toBeUndefined();
  });
});
