import { describe, expect, it } from 'vitest';
import { parseRecords } from '../../../src/api/fetch-pages.js';

function messageOf(body: string, contentType?: string): string {
  try {
    parseRecords(body, '/v3/candidates', undefined, contentType);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('parsed');
}

describe('a list body that is not JSON', () => {
  it('never quotes a body that starts as JSON: it may hold records the field policy would drop', () => {
    const cut =
      '[{"id":1,"first_name":"Ada","emails":[{"value":"ada@example.com"}]},{"id":2,"first';
    const message = messageOf(cut, 'application/json; charset=utf-8');
    expect(message).toMatch(/\/v3\/candidates is not valid JSON/);
    expect(message).not.toContain('Ada');
    expect(message).not.toContain('ada@example.com');
    expect(messageOf('\ufeff {"data": [{"name": "Ada"}]')).not.toContain('Ada');
  });

  it('quotes the start of any other body, as a proxy or login page answering instead of the API', () => {
    expect(messageOf('<html><title>Sign in</title>', 'text/html')).toMatch(
      /\/v3\/candidates is not JSON but a text\/html body starting "<html><title>Sign in<\/title>"/,
    );
  });
});
