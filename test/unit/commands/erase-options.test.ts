import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { options, parseEraseRequest } from '../../../src/commands/erase-options.js';
import { parseOptions } from '../../../src/commands/options.js';
import { main } from '../../../src/main.js';
import { captureIo } from '../../support/capture-io.js';

const parse = (args: string[]) => parseEraseRequest(parseOptions(options, args));

describe('hiresync erase options', () => {
  it('takes one resource and its ids (repeated or comma-separated), of the account default unless named', () => {
    expect(parse(['--resource', 'jobs', '--id', '7', '--id', '12, 7,9223372036854775807'])).toEqual(
      {
        mode: 'ids',
        account: 'default',
        resource: 'jobs',
        ids: ['7', '12', '9223372036854775807'],
        note: null,
        waitMs: 60_000,
      },
    );
    expect(
      parse([
        '--account',
        'acme',
        '--resource',
        'candidates',
        '--id',
        '0042',
        '--note',
        '  ticket 42 ',
        '--wait',
        '5m',
      ]),
    ).toEqual({
      mode: 'ids',
      account: 'acme',
      resource: 'candidates',
      ids: ['42'],
      note: 'ticket 42',
      waitMs: 300_000,
    });
  });

  it('takes --deleted-before with optional accounts and resources (default every one)', () => {
    expect(parse(['--deleted-before', '30d'])).toEqual({
      mode: 'deleted',
      accounts: undefined,
      resources: undefined,
      afterMs: 30 * 86_400_000,
      note: null,
      waitMs: 60_000,
    });
    expect(
      parse(['--deleted-before', '90d', '--account', 'default,acme', '--resource', 'jobs']),
    ).toMatchObject({ mode: 'deleted', accounts: ['default', 'acme'], resources: ['jobs'] });
  });

  it.each([
    [
      'an id that is not a number',
      ['--resource', 'jobs', '--id', '4x'],
      '--id takes a record id (a whole',
    ],
    ['a negative id', ['--resource', 'jobs', '--id=-4'], '--id takes a record id'],
    ['a fractional id', ['--resource', 'jobs', '--id', '1.5'], '--id takes a record id'],
    [
      'an id beyond bigint',
      ['--resource', 'jobs', '--id', '9223372036854775808'],
      '--id takes a record id',
    ],
    ['an empty id', ['--resource', 'jobs', '--id', ''], '--id was given an empty value'],
    ['no id', ['--resource', 'jobs'], 'name the records to erase: --resource NAME --id N'],
    ['ids without a resource', ['--id', '4'], '--id needs --resource NAME'],
    [
      'ids of two resources',
      ['--resource', 'jobs,job_posts', '--id', '4'],
      '--id takes one --resource',
    ],
    [
      'ids of two accounts',
      ['--account', 'default,acme', '--resource', 'jobs', '--id', '4'],
      '--id takes one --account',
    ],
    [
      'a name that cannot be a resource',
      ['--resource', 'Jobs!', '--id', '4'],
      '--resource: "Jobs!" is not a resource name',
    ],
    [
      "one of hiresync's own tables",
      ['--resource', 'sync_runs', '--id', '4'],
      "sync_runs is the name of one of hiresync's own",
    ],
    [
      'a reserved account name',
      ['--account', 'public', '--resource', 'jobs', '--id', '4'],
      '--account: account name "public" is reserved',
    ],
    [
      '--id beside --deleted-before',
      ['--resource', 'jobs', '--id', '4', '--deleted-before', '30d'],
      'give one or the other',
    ],
    [
      '--deleted-before under an hour',
      ['--deleted-before', '5m'],
      '--deleted-before takes a duration from 1h to 3650d',
    ],
    [
      '--deleted-before that is no duration',
      ['--deleted-before', 'soon'],
      '--deleted-before takes a duration',
    ],
    [
      '--wait over an hour',
      ['--resource', 'jobs', '--id', '4', '--wait', '2h'],
      '--wait takes a duration from 1s to 1h',
    ],
    [
      'a note over 500 characters',
      ['--resource', 'jobs', '--id', '4', '--note', 'x'.repeat(501)],
      '--note takes at most 500 characters',
    ],
  ])('refuses %s before anything connects', (_label, args, message) => {
    expect(() => parse(args)).toThrow(message);
  });
});

describe('hiresync erase usage errors, in process', () => {
  let connect: ReturnType<typeof vi.spyOn>;
  beforeEach(() => {
    connect = vi.spyOn(net.Socket.prototype, 'connect');
  });
  afterEach(() => {
    expect(connect, 'no connection was attempted').not.toHaveBeenCalled();
    connect.mockRestore();
  });

  it('exits 2 on a bad id or a missing DATABASE_URL, naming it, without connecting', async () => {
    const env = { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/x' };
    const io = captureIo();
    expect(await main(['erase', '--resource', 'jobs', '--id', 'abc'], env, io)).toBe(2);
    expect(io.err()).toBe(
      'hiresync: --id takes a record id (a whole number, as the API\'s ids are), got "abc"; nothing was erased\n',
    );
    const missing = captureIo();
    expect(await main(['erase', '--resource', 'jobs', '--id', '1'], {}, missing)).toBe(2);
    expect(missing.err()).toMatch(/DATABASE_URL: is required/);
  });
});
