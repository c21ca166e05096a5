// The last line of .ci/run, from vitest's JSON report and npm test's exit status:
//   node .ci/summary.mjs REPORT STATUS
// prints "N skipped, N failed suites", then the last line "N passed, N failed"
// (the form CI reads), and exits with the run's status. "failed" counts the failed tests and the suites that failed on
// their own (a beforeAll that threw, a file that could not be imported: their
// tests are skipped or never collected, so no test failed). It is never 0 when
// the run failed: a non-zero status, a report that says it did not succeed, or
// no test at all count as 1 failure at least, and make the exit status 1.
import { readFileSync } from 'node:fs';

/**
 * @param {unknown} report vitest's JSON report (the shape of Jest's), or undefined when none was written
 * @param {number} status npm test's exit status
 * @returns {{ line: string, status: number }}
 */
function summarize(report, status) {
  const r = report && typeof report === 'object' ? report : undefined;
  const files = Array.isArray(r?.testResults) ? r.testResults : [];
  const passed = Number(r?.numPassedTests ?? 0);
  const failedTests = Number(r?.numFailedTests ?? 0);
  const skipped = Number(r?.numPendingTests ?? 0) + Number(r?.numTodoTests ?? 0);
  // A file that failed while none of its tests did: a hook or its import failed.
  const failedSuites = files.filter(
    (file) =>
      file?.status === 'failed' &&
      !(file.assertionResults ?? []).some((test) => test?.status === 'failed'),
  ).length;
  const runFailed =
    r === undefined || status !== 0 || r.success === false || Number(r.numTotalTests ?? 0) === 0;
  const counted = failedTests + failedSuites;
  const failed = runFailed ? Math.max(counted, 1) : counted;
  return {
    line: `${skipped} skipped, ${failedSuites} failed suites\n${passed} passed, ${failed} failed`,
    status: status !== 0 ? status : failed > 0 ? 1 : 0,
  };
}

/** The report at `path`, or undefined when it is missing, empty or not JSON (said on stderr). */
function readReport(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    process.stderr.write(
      `[ci] the test runner wrote no readable report at ${path}: ${error.message}\n`,
    );
    return undefined;
  }
}

const [path, given] = process.argv.slice(2);
const status = Number.parseInt(given ?? '', 10);
const result = summarize(readReport(path ?? ''), Number.isInteger(status) ? status : 1);
process.stdout.write(`${result.line}\n`);
process.exitCode = result.status;
