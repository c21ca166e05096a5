import { describe, expect, it } from 'vitest';
import { isConsoleLogin } from '../../../src/console/basic-auth.js';

const PASSWORD = 'correct horse battery';
const basic = (text: string) => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;

describe('the console login', () => {
  it('takes user hiresync with the password', () => {
    expect(isConsoleLogin(basic(`hiresync:${PASSWORD}`), PASSWORD)).toBe(true);
    expect(isConsoleLogin(basic(`hiresync:${PASSWORD}`).replace('Basic', 'basic'), PASSWORD)).toBe(
      true,
    );
  });

  it('takes a password holding colons and non-ASCII characters', () => {
    const password = 'a:b:c — ünïcode';
    expect(isConsoleLogin(basic(`hiresync:${password}`), password)).toBe(true);
  });

  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['another scheme', `Bearer ${PASSWORD}`],
    ['a wrong password', basic('hiresync:correct horse battery!')],
    ['a prefix of the password', basic('hiresync:correct horse')],
    ['another user', basic(`admin:${PASSWORD}`)],
    ['no colon', basic(`hiresync${PASSWORD}`)],
    ['an empty password', basic('hiresync:')],
    ['text that is not base64', 'Basic !!!'],
  ])('refuses %s', (_what, header) => {
    expect(isConsoleLogin(header, PASSWORD)).toBe(false);
  });
});
