/**
 * Benchmark: the cost of secret redaction as accounts grow. For each N, a
 * child process of its own (the registry is per process) registers N accounts
 * as a worker does (the client secret as a `Secret`, the Basic credential
 * built from it, pinned, and the access token in force in the account's
 * token-provider slot), then measures, median of many:
 * - a new token: one account's token replaced (what a worker does each hour
 *   per account), alone and together with the next log line written (a
 *   registry that defers work to the next redaction pays it there), and
 *   the mean CPU time of the two (user + system, GC included);
 * - a log line: redacting a typical pino line holding no secret, and a line
 *   echoing a registered token;
 * and the child's heap (after a GC) once the N accounts are registered, and
 * again once 10,000 more tokens have replaced theirs (the most replaced
 * tokens the registry keeps, so each measured replacement also forgets one),
 * and its peak RSS.
 * Tokens are JWT-shaped (~230 characters, one shared header), secrets 40
 * characters of a wide alphabet, client ids `client-00042` (shared prefixes):
 * shared prefixes make the matcher walk further than random strings would.
 *
 *   node dist/bench/redaction-scale.js [N,N,...]      (default 100,1000,5000)
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { redactSecrets, registerSecret, Secret } from '../src/secret.js';

const SELF = fileURLToPath(import.meta.url);

/** Replaced tokens the registry keeps at most (MAX_RECENT of src/secret.ts; 100 before issue 23). */
const RECENT_KEPT = 10_000;
/** New tokens measured at most (fewer when 30 s run out first). */
const TOKEN_SAMPLES = 300;

/** What one child measured for N accounts. */
export interface RedactionScaleResult {
  accounts: number;
  /** Registering the N accounts, in total, including the first redaction after it. */
  setupS: number;
  /** One account's token replaced: median µs, and how many samples. */
  newTokenUs: number;
  /** The same, plus the next log line's redaction (deferred work lands there). */
  newTokenAndLineUs: number;
  /** CPU time (user + system, all threads: GC too) per new token and its next line, mean µs. */
  newTokenCpuUs: number;
  tokenSamples: number;
  /** Redacting a ~230-character log line holding no secret: median µs. */
  lineUs: number;
  /** Redacting a line echoing a registered token: median µs. */
  echoLineUs: number;
  /** Heap after registering the N accounts (after a GC). */
  heapMb: number;
  /** Heap once RECENT_KEPT tokens have been replaced too. */
  heapFullMb: number;
  peakRssMb: number;
}

const LINE =
  '{"level":30,"time":"2026-11-24T19:50:14.182Z","service":"hiresync","pid":41233,"hostname":"worker-7","account":"c00042","resource":"tracking_links","runId":"9f0c2d4e-51aa-4b7e-9d0e-2f7c1a9b3e11","page":12,"records":500,"msg":"page written"}\n';

function jwt(account: number): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const header = part({ alg: 'RS256', typ: 'JWT', kid: 'k1' });
  const claims = part({
    sub: `client-${account}`,
    exp: 1_800_000_000,
    jti: randomBytes(12).toString('hex'),
  });
  return `${header}.${claims}.${randomBytes(32).toString('base64url')}`;
}

function secretValue(): string {
  return randomBytes(30).toString('base64').replace(/\//g, '~').slice(0, 40);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};

/** Samples `fn` (µs each) until `max` samples or `budgetMs` spent, at least `min`. */
function sample(fn: () => void, max: number, budgetMs: number, min = 3): number[] {
  const out: number[] = [];
  const end = performance.now() + budgetMs;
  while (out.length < max && (out.length < min || performance.now() < end)) {
    const t0 = performance.now();
    fn();
    out.push((performance.now() - t0) * 1000);
  }
  return out;
}

function measure(accounts: number): RedactionScaleResult {
  const started = performance.now();
  const tokens: string[] = [];
  for (let i = 0; i < accounts; i += 1) {
    const clientId = `client-${String(i).padStart(5, '0')}`;
    const secret = new Secret(secretValue());
    registerSecret(Buffer.from(`${clientId}:${secret.reveal()}`).toString('base64'), {
      pinned: true,
    });
    const token = jwt(i);
    registerSecret(token, { slot: `bench:${i}` });
    tokens.push(token);
  }
  redactSecrets(LINE);
  const setupS = (performance.now() - started) / 1000;
  globalThis.gc?.();
  const heapMb = process.memoryUsage().heapUsed / 2 ** 20;

  let k = 0;
  /** Replaces the token of the next account; returns µs spent registering it. */
  const replace = (token = jwt((k + 1) % accounts)) => {
    k += 1;
    tokens[k % accounts] = token;
    const t0 = performance.now();
    registerSecret(token, { slot: `bench:${k % accounts}` });
    return (performance.now() - t0) * 1000;
  };
  // Warm-up, not counted: as many replacements as the registry keeps replaced
  // tokens (src/secret.ts MAX_RECENT), so that each one measured also forgets
  // the oldest, as in a worker that has run for hours; the heap then is the
  // most the recent ones can take.
  for (let i = 0; i < RECENT_KEPT; i += 1) replace();
  redactSecrets(LINE);
  globalThis.gc?.();
  const heapFullMb = process.memoryUsage().heapUsed / 2 ** 20;
  const registerOnly: number[] = [];
  const withLine: number[] = [];
  // Made beforehand, so that the CPU time counts registering and redacting only.
  const next = Array.from({ length: TOKEN_SAMPLES }, (_, i) => jwt((k + 1 + i) % accounts));
  const cpu = process.cpuUsage();
  sample(
    () => {
      const registering = replace(next[registerOnly.length]);
      const t0 = performance.now();
      redactSecrets(LINE);
      registerOnly.push(registering);
      withLine.push(registering + (performance.now() - t0) * 1000);
    },
    TOKEN_SAMPLES,
    30_000,
  );
  const used = process.cpuUsage(cpu);
  const newTokenCpuUs = (used.user + used.system) / withLine.length;

  // A token in force (the account's latest).
  const echoed = tokens[(k + 1) % accounts] ?? '';
  const echo = `{"level":50,"msg":"run failed","err":{"message":"403 from /v3/jobs: token ${echoed} may not read /v3/jobs"}}\n`;
  if (redactSecrets(echo).includes(echoed)) {
    throw new Error('the echoed token was not redacted: the benchmark measures nothing');
  }
  const lines = sample(() => redactSecrets(LINE), 2000, 5_000);
  const echoes = sample(() => redactSecrets(echo), 2000, 5_000);
  return {
    accounts,
    setupS,
    newTokenUs: median(registerOnly),
    newTokenAndLineUs: median(withLine),
    newTokenCpuUs,
    tokenSamples: withLine.length,
    lineUs: median(lines),
    echoLineUs: median(echoes),
    heapMb,
    heapFullMb,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
  };
}

/** Runs one child per N (each with a registry of its own) and returns what they measured. */
export async function redactionScale(
  counts: number[] = [100, 1000, 5000],
): Promise<RedactionScaleResult[]> {
  const results: RedactionScaleResult[] = [];
  for (const n of counts) {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', SELF, '--child', String(n)],
      { maxBuffer: 1 << 20 },
    );
    results.push(JSON.parse(stdout) as RedactionScaleResult);
  }
  return results;
}

const us = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(1)} ms` : `${x.toFixed(1)} µs`);

/** One line per N, for a table or a terminal. */
export function describeRedactionScale(results: RedactionScaleResult[]): string {
  return results
    .map(
      (r) =>
        `${r.accounts.toLocaleString('en-US')} accounts: new token ${us(r.newTokenUs)} (+ next line ${us(r.newTokenAndLineUs)}, CPU ${us(r.newTokenCpuUs)}), line ${us(r.lineUs)}, line echoing a token ${us(r.echoLineUs)}, heap ${r.heapMb.toFixed(0)} MB (${r.heapFullMb.toFixed(0)} MB with ${RECENT_KEPT.toLocaleString('en-US')} replaced tokens kept), peak RSS ${r.peakRssMb.toFixed(0)} MB`,
    )
    .join('; ');
}

if (process.argv[2] === '--child') {
  process.stdout.write(JSON.stringify(measure(Number(process.argv[3]))));
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const counts = process.argv[2]?.split(',').map(Number);
  const results = await redactionScale(counts);
  for (const r of results) {
    process.stdout.write(
      `${r.accounts} accounts: setup ${r.setupS.toFixed(1)} s; new token ${us(r.newTokenUs)}, with the next line ${us(r.newTokenAndLineUs)} (${r.tokenSamples} samples; CPU ${us(r.newTokenCpuUs)} each); ` +
        `line ${us(r.lineUs)}, line echoing a token ${us(r.echoLineUs)}; heap ${r.heapMb.toFixed(1)} MB, ${r.heapFullMb.toFixed(1)} MB with ${RECENT_KEPT} replaced tokens kept; peak RSS ${r.peakRssMb.toFixed(0)} MB\n`,
    );
  }
}
