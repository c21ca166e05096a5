import { describe, expect, it } from 'vitest';
import { findNextLink } from '../../../src/api/link-header.js';
import { UnexpectedBodyError } from '../../../src/errors.js';

const REQ = 'https://api.example.com/v3/jobs?per_page=500';
const NEXT = 'https://api.example.com/v3/jobs?cursor=eyJhIjoxfQ==';

describe('findNextLink', () => {
  it('finds a quoted rel="next"', () => {
    expect(findNextLink(`<${NEXT}>; rel="next"`, REQ)).toBe(NEXT);
  });

  it('finds a bare rel=next', () => {
    expect(findNextLink(`<${NEXT}>; rel=next`, REQ)).toBe(NEXT);
  });

  it('finds next among several relation types in one rel', () => {
    expect(findNextLink(`<${NEXT}>; rel="prefetch next"`, REQ)).toBe(NEXT);
  });

  it('matches the relation type case-insensitively', () => {
    expect(findNextLink(`<${NEXT}>; REL="Next"`, REQ)).toBe(NEXT);
  });

  it('picks next among several links in any order', () => {
    const header = `<https://api.example.com/v3/jobs?cursor=p>; rel="prev", <${NEXT}>; title="more"; rel="next"`;
    expect(findNextLink(header, REQ)).toBe(NEXT);
  });

  it('tolerates whitespace around links, separators and parameters', () => {
    expect(findNextLink(`  < ${NEXT} >  ;   rel = "next"  ,  `, REQ)).toBe(NEXT);
  });

  it('keeps commas and semicolons inside the URL and quoted parameters', () => {
    const odd = 'https://api.example.com/v3/jobs?cursor=a,b;c';
    expect(findNextLink(`<${odd}>; title="a, b; c"; rel="next"`, REQ)).toBe(odd);
  });

  it('takes the header as an array of values', () => {
    expect(findNextLink(['<https://x.example/a>; rel="prev"', `<${NEXT}>; rel="next"`], REQ)).toBe(
      NEXT,
    );
  });

  it('returns the target exactly as sent, without re-encoding', () => {
    const raw = 'https://api.example.com/v3/jobs?cursor=AbC-_%3D%3D';
    expect(findNextLink(`<${raw}>; rel="next"`, REQ)).toBe(raw);
  });

  it('resolves a relative target against the request URL', () => {
    expect(findNextLink('</v3/jobs?cursor=xyz>; rel="next"', REQ)).toBe(
      'https://api.example.com/v3/jobs?cursor=xyz',
    );
  });

  it('treats an absent or empty header as the last page', () => {
    expect(findNextLink(undefined, REQ)).toBeUndefined();
    expect(findNextLink('', REQ)).toBeUndefined();
    expect(findNextLink('   ', REQ)).toBeUndefined();
  });

  it('returns undefined when no link is rel=next', () => {
    expect(
      findNextLink('<https://api.example.com/v3/jobs?cursor=p>; rel="prev"', REQ),
    ).toBeUndefined();
    expect(findNextLink(`<${NEXT}>; title="next"`, REQ)).toBeUndefined();
    expect(findNextLink(`<${NEXT}>; rel="nextish"`, REQ)).toBeUndefined();
  });

  it('fails on a malformed header instead of ending the walk early', () => {
    expect(() => findNextLink(`${NEXT}; rel="next"`, REQ)).toThrow(UnexpectedBodyError);
    expect(() => findNextLink(`<${NEXT}>; rel="next`, REQ)).toThrow(UnexpectedBodyError);
  });
});
