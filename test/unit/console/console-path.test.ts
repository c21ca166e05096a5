import { describe, expect, it } from 'vitest';
import { isConsolePath } from '../../../src/console/serve-console.js';

describe('the path of the console', () => {
  it('is / whatever the public URL', () => {
    expect(isConsolePath('/', undefined)).toBe(true);
    expect(isConsolePath('/', 'https://ops.example.com/hiresync')).toBe(true);
  });

  it("is also the public URL's path with a slash, which a reverse proxy may pass on", () => {
    expect(isConsolePath('/hiresync/', 'https://ops.example.com/hiresync')).toBe(true);
    expect(isConsolePath('/hiresync/', 'https://ops.example.com/hiresync/')).toBe(true);
  });

  it('is no other path', () => {
    for (const path of ['', '/index.html', '//', '/hiresync', '/hiresync/x', '/other/']) {
      expect(isConsolePath(path, 'https://ops.example.com/hiresync'), path).toBe(false);
    }
    expect(isConsolePath('/hiresync/', undefined)).toBe(false);
    expect(isConsolePath('//', 'https://ops.example.com/')).toBe(false);
  });
});
