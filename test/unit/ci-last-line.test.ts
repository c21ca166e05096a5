import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// .ci/run's last line comes from .ci/summary.mjs, given vitest's JSON report
// and npm test's exit status. The reports below have the shape vitest 5 writes
// (the counts and per-file results of each case, as vitest gave them).
const SUMMARY = fileURLToPath(new URL('../../.ci/summary.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'hiresync-ci-summary-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Status = 'passed' | 'failed' | 'skipped' | 'pending' | 'todo';

interface File {
  name: string;
  status: 'passed' | 'failed';
  message?: string;
  tests: Status[];
}

/** A vitest JSON report of `files`, counted as vitest counts them. */
function report(files: File[]): Record<string, unknown> {
  const all = files.flatMap((f) => f.tests);
  const count = (...statuses: Status[]) => all.filter((s) => statuses.includes(s)).length;
  return {
    numTotalTests: all.length,
    numPassedTests: count('passed'),
    numFailedTests: count('failed'),
    numPendingTests: count('skipped', 'pending'),
    numTodoTests: count('todo'),
    success: files.every((f) => f.status === 'passed'),
    testResults: files.map((f) => ({
      name: `/repo/test/unit/${f.name}`,
      status: f.status,
      message: f.message ?? '',
      assertionResults: f.tests.map((status, i) => ({ title: `test ${i}`, status })),
    })),
  };
}

/** The lines .ci/summary.mjs prints, and its exit status, for `written` (undefined: no report) and `status`. */
function lastLine(written: Record<string, unknown> | undefined, status: number) {
  const path = join(dir, `report-${Math.random().toString(36).slice(2)}.json`);
  if (written !== undefined) writeFileSync(path, JSON.stringify(written));
  const run = spawnSync(process.execPath, [SUMMARY, path, String(status)], { encoding: 'utf8' });
  return { line: run.stdout, status: run.status };
}

describe(".ci/run's last line", () => {
  it('counts passed, failed and skipped tests and no failed suite when everything passed', () => {
    const passed = report([
      { name: 'a.test.ts', status: 'passed', tests: ['passed', 'passed'] },
      { name: 'b.test.ts', status: 'passed', tests: ['passed'] },
    ]);
    expect(lastLine(passed, 0)).toEqual({
      line: '0 skipped, 0 failed suites\n3 passed, 0 failed\n',
      status: 0,
    });
  });

  it('counts a suite whose beforeAll threw as failed, though none of its tests failed (they are skipped)', () => {
    const beforeAllThrew = report([
      { name: 'a.test.ts', status: 'passed', tests: ['passed', 'passed'] },
      { name: 'b.test.ts', status: 'failed', tests: ['skipped', 'skipped', 'passed'] },
    ]);
    expect(beforeAllThrew.numFailedTests).toBe(0);
    expect(lastLine(beforeAllThrew, 1)).toEqual({
      line: '2 skipped, 1 failed suites\n3 passed, 1 failed\n',
      status: 1,
    });
  });

  it('counts a file that could not be imported (no test collected) as failed', () => {
    const importFailed = report([
      { name: 'a.test.ts', status: 'passed', tests: ['passed'] },
      {
        name: 'c.test.ts',
        status: 'failed',
        message: "Cannot find module './does-not-exist.js' imported from /repo/test/unit/c.test.ts",
        tests: [],
      },
    ]);
    expect(lastLine(importFailed, 1)).toEqual({
      line: '0 skipped, 1 failed suites\n1 passed, 1 failed\n',
      status: 1,
    });
  });

  it('counts a failed test once: its file is no failed suite of its own', () => {
    const testFailed = report([
      { name: 'a.test.ts', status: 'failed', tests: ['passed', 'failed', 'failed'] },
      { name: 'b.test.ts', status: 'passed', tests: ['passed'] },
    ]);
    expect(lastLine(testFailed, 1)).toEqual({
      line: '0 skipped, 0 failed suites\n2 passed, 2 failed\n',
      status: 1,
    });
  });

  it('counts skipped and todo tests as skipped, which fail nothing', () => {
    const skipped = report([
      { name: 'a.test.ts', status: 'passed', tests: ['passed', 'skipped', 'skipped', 'todo'] },
    ]);
    expect(lastLine(skipped, 0)).toEqual({
      line: '3 skipped, 0 failed suites\n1 passed, 0 failed\n',
      status: 0,
    });
  });

  it('never says 0 failed when npm test exited non-zero, whatever the report counted', () => {
    // An error outside every test (an unhandled rejection) fails the run, not a test.
    const allPassed = report([
      { name: 'a.test.ts', status: 'passed', tests: ['passed', 'passed'] },
    ]);
    expect(lastLine(allPassed, 1)).toEqual({
      line: '0 skipped, 0 failed suites\n2 passed, 1 failed\n',
      status: 1,
    });
    // The status is kept as npm test gave it.
    expect(lastLine(allPassed, 2).status).toBe(2);
  });

  it('says 1 failed, exiting 1, when there is no report or no test at all', () => {
    expect(lastLine(undefined, 1)).toEqual({
      line: '0 skipped, 0 failed suites\n0 passed, 1 failed\n',
      status: 1,
    });
    expect(lastLine(undefined, 0)).toEqual({
      line: '0 skipped, 0 failed suites\n0 passed, 1 failed\n',
      status: 1,
    });
    expect(lastLine(report([]), 0)).toEqual({
      line: '0 skipped, 0 failed suites\n0 passed, 1 failed\n',
      status: 1,
    });
  });

  it('ends with the line "N passed, N failed" alone, as .ci/run has always ended', () => {
    const beforeAllThrew = report([{ name: 'b.test.ts', status: 'failed', tests: ['skipped'] }]);
    expect(lastLine(beforeAllThrew, 1).line).toMatch(/\n\d+ passed, [1-9]\d* failed\n$/);
  });
});
