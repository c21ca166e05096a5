import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SUBCOMMANDS } from '../../../src/commands/accounts/index.js';
import { defineCommand } from '../../../src/commands/command.js';
import { COMMANDS } from '../../../src/commands/index.js';
import type { OptionTable } from '../../../src/commands/options.js';
import { main } from '../../../src/main.js';
import { captureIo } from '../../support/capture-io.js';

/** Help with every run of whitespace (wrapping, indentation) as one space. */
const flatten = (text: string) => text.replace(/\s+/g, ' ');

async function helpOf(name: string): Promise<string> {
  const io = captureIo();
  const code = await main([name, '--help'], {}, io);
  expect({ code, stderr: io.err() }, name).toEqual({ code: 0, stderr: '' });
  return io.out();
}

describe('command help', () => {
  it.each(COMMANDS.map((c) => [c.name, c] as const))(
    '%s --help shows every option of its table, with placeholder, description and default',
    async (name, entry) => {
      const command = await entry.load();
      expect(command.name).toBe(name);
      const help = await helpOf(name);
      expect(help.startsWith(`usage: hiresync ${name}`)).toBe(true);
      expect(flatten(help)).toContain(flatten(command.description));
      for (const [option, spec] of Object.entries(command.options)) {
        const flag = spec.type === 'string' ? `--${option} ${spec.value}` : `--${option}`;
        expect(help, option).toContain(`[${flag}]`);
        const listed = spec.short === undefined ? flag : `-${spec.short}, ${flag}`;
        expect(help, option).toMatch(
          new RegExp(`^  ${listed.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}  `, 'm'),
        );
        const text =
          spec.type === 'string' && spec.default !== undefined
            ? `${spec.description} (default ${spec.default})`
            : spec.description;
        expect(flatten(help), option).toContain(flatten(text));
      }
      expect(help).toMatch(/^ {2}-h, --help {2,}print this help$/m);
    },
  );

  it('keeps every line of help within 80 columns', async () => {
    for (const { name } of COMMANDS) {
      for (const line of (await helpOf(name)).split('\n')) {
        expect(line.length, `${name}: ${line}`).toBeLessThanOrEqual(80);
      }
    }
  });

  it('is generated from the option table: a new option appears in help and parses', async () => {
    const options = {
      colour: { type: 'string', value: 'NAME', description: 'paint it', default: 'red' },
      twice: { type: 'boolean', description: 'do it again' },
      tag: { type: 'string', value: 'T', multiple: true, description: 'label the run' },
    } as const satisfies OptionTable;
    let seen: unknown;
    const paint = defineCommand({
      name: 'paint',
      description: 'Paints the warehouse.',
      options,
      async execute(values) {
        seen = values;
        return 0;
      },
    });
    const io = captureIo();
    expect(await paint.run(['--help'], { env: {}, ...io })).toBe(0);
    expect(io.out()).toBe(
      [
        'usage: hiresync paint [--colour NAME] [--twice] [--tag T]...',
        '',
        'Paints the warehouse.',
        '',
        'options:',
        '  --colour NAME   paint it (default red)',
        '  --twice         do it again',
        '  --tag T         label the run',
        '  -h, --help      print this help',
        '',
      ].join('\n'),
    );
    expect(await paint.run(['--tag', 'a', '--tag', 'b'], { env: {}, ...io })).toBe(0);
    expect(seen).toEqual({ colour: 'red', tag: ['a', 'b'] });
  });

  it('lists every command with its own summary in hiresync --help', async () => {
    const io = captureIo();
    expect(await main(['--help'], {}, io)).toBe(0);
    for (const command of COMMANDS) {
      expect(flatten(io.out())).toContain(`${command.name} ${flatten(command.summary)}`);
    }
    expect(io.out()).toContain("Run 'hiresync <command> --help' for a command's options.");
  });

  it('takes -h for --help at the top, on every command and on every accounts subcommand', async () => {
    const both = async (args: string[]) => {
      const long = captureIo();
      const short = captureIo();
      const codes = [
        await main([...args, '--help'], {}, long),
        await main([...args, '-h'], {}, short),
      ];
      expect({ codes, out: short.out(), err: short.err() }, args.join(' ')).toEqual({
        codes: [0, 0],
        out: long.out(),
        err: '',
      });
      return short.out();
    };
    expect(await both([])).toMatch(/^usage: hiresync <command>/);
    for (const { name } of COMMANDS) {
      expect(await both([name])).toMatch(new RegExp(`^usage: hiresync ${name}`));
    }
    for (const { name } of SUBCOMMANDS) {
      expect(await both(['accounts', name])).toMatch(
        new RegExp(`^usage: hiresync accounts ${name}`),
      );
    }
  });

  it('prints the version of package.json on --version and -V', async () => {
    const { version } = JSON.parse(
      readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    for (const flag of ['--version', '-V']) {
      const io = captureIo();
      expect(await main([flag], {}, io)).toBe(0);
      expect(io.out()).toBe(`hiresync ${version}\n`);
    }
  });

  it('prints the usage and exits 2 when no command is given', async () => {
    const io = captureIo();
    expect(await main([], {}, io)).toBe(2);
    expect(io.out().startsWith('usage: hiresync <command> [options]')).toBe(true);
  });
});
