/** redis-server, for a Redis of a test's or the soak's own. */
export const REDIS_SERVER = "redis-server (Debian's redis-server package)";
/** initdb and pg_ctl, for a Postgres cluster of a test's or the soak's own. */
export const POSTGRES_SERVER = "Postgres's initdb and pg_ctl (Debian's postgresql package)";

/**
 * Whether what needs `binaries` of the machine runs here: true when they are
 * (`present`). Absent, outside CI: false, said on stderr, and the test is
 * skipped (the soak goes without restarts). Absent under CI (env CI set, as
 * .ci/run sets it): an error, not a skip, as for the browser and promtool
 * tests: .ci/run installs them, so what needs them must run.
 */
export function presentUnlessCi(present: boolean, binaries: string): boolean {
  if (present) return true;
  if (process.env.CI)
    throw new Error(`${binaries} is missing in CI: install it (.ci/run installs it)`);
  process.stderr.write(`skipped: ${binaries} is missing (with CI set this fails instead)\n`);
  return false;
}
