import { readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
} from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { COMMANDS } from '../../src/commands/index.js';
import { readListeners } from '../../src/config/listeners.js';
import { fullFields } from '../../src/config/variables.js';
import { type HttpServers, startHttpServer } from '../../src/http/server.js';
import { parseRedisUrl } from '../../src/redis/redis-target.js';
import type { Metrics } from '../../src/status/metrics.js';
import type { Database } from '../../src/warehouse/tables.js';
import { variablesRead } from '../support/config-variables.js';

const FOLDER = new URL('../../deploy/kubernetes/', import.meta.url);
const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

type Probe = {
  httpGet?: { path: string; port: string | number };
  tcpSocket?: { port: string | number };
};

/** A pod's spec, as far as these tests read it. */
interface PodSpec {
  containers: Container[];
  volumes?: { name: string; secret?: { secretName: string } }[];
  securityContext?: Record<string, unknown>;
  terminationGracePeriodSeconds?: number;
  restartPolicy?: string;
}

/** A Kubernetes object, as far as these tests read it (the kinds' specs merged into one shape). */
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  spec?: {
    selector?: Record<string, unknown>;
    template?: { spec: PodSpec };
    ttlSecondsAfterFinished?: number;
    ports?: unknown[];
    endpoints?: { port: string; path: string }[];
    groups?: unknown;
  };
}

interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  ports?: { name: string; containerPort: number }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string } };
  }[];
  volumeMounts?: { name: string; mountPath: string }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
}

/** Every document of every file of deploy/kubernetes/, with its file. */
function manifests(): { file: string; doc: Manifest }[] {
  const out: { file: string; doc: Manifest }[] = [];
  for (const file of readdirSync(FOLDER)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()) {
    for (const document of parseAllDocuments(readFileSync(new URL(file, FOLDER), 'utf8'))) {
      if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]?.message}`);
      const doc = document.toJS() as Manifest | null;
      if (doc !== null) out.push({ file, doc });
    }
  }
  return out;
}

function find(kind: string, name: string): Manifest {
  const found = manifests().find(({ doc }) => doc.kind === kind && doc.metadata?.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in deploy/kubernetes/`);
  return found.doc;
}

const configMap = () => find('ConfigMap', 'hiresync').data ?? {};
const secrets = () =>
  manifests()
    .filter(({ doc }) => doc.kind === 'Secret')
    .map(({ doc }) => doc);
const secretKeys = (secret: Manifest) => Object.keys({ ...secret.stringData, ...secret.data });
const deployment = () => find('Deployment', 'hiresync-worker');
const job = () => find('Job', 'hiresync-migrate');

function podSpec(owner: Manifest): PodSpec {
  const spec = owner.spec?.template?.spec;
  if (!spec) throw new Error(`${owner.kind} ${owner.metadata.name} has no pod template`);
  return spec;
}

const podSpecs = () => [podSpec(deployment()), podSpec(job())];
const containers = () => podSpecs().flatMap((spec) => spec.containers);

function only<T>(items: readonly T[] | undefined, what: string): T {
  const [item] = items ?? [];
  if (items?.length !== 1 || item === undefined) throw new Error(`expected one ${what}`);
  return item;
}

const worker = () => only(podSpec(deployment()).containers, 'container in the Deployment');

/** The value a container gets for `name`: its own env, else the ConfigMap's or Secret's it takes. */
function settingOf(container: Container, name: string): string | undefined {
  const own = container.env?.find((e) => e.name === name);
  const ref = own?.valueFrom?.secretKeyRef;
  if (ref) return find('Secret', ref.name).stringData?.[ref.key];
  if (own) return own.value;
  return container.envFrom?.some((f) => f.configMapRef?.name === 'hiresync')
    ? configMap()[name]
    : undefined;
}

/** The Prometheus Operator's PrometheusRule holding deploy/prometheus-rules.yml's groups as they are. */
function renderPrometheusRule(rules: string): string {
  const lines = rules.split('\n');
  const groups = lines.findIndex((line) => line.startsWith('groups:'));
  const body = lines.slice(groups).map((line) => (line === '' ? '' : `  ${line}`));
  return [
    "# deploy/prometheus-rules.yml's alerts for the Prometheus Operator (needs its",
    '# CRDs); written from that file by test/unit/kubernetes-manifests.test.ts',
    '# (`npx vitest run -u test/unit/kubernetes-manifests.test.ts` after changing',
    "# it). Give it the labels your Prometheus's ruleSelector matches.",
    'apiVersion: monitoring.coreos.com/v1',
    'kind: PrometheusRule',
    'metadata:',
    '  name: hiresync',
    '  labels:',
    '    app.kubernetes.io/name: hiresync',
    'spec:',
    ...body,
  ].join('\n');
}

const servers: HttpServers[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** hiresync's own HTTP server on a free port, its stores answering (or Postgres not). */
async function serve(postgres: 'answers' | 'down'): Promise<number> {
  const driver = new DummyDriver();
  if (postgres === 'down') {
    driver.acquireConnection = () => Promise.reject(new Error('connect ECONNREFUSED'));
  }
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  const metrics = {
    scrape: async () => ({ headers: { 'content-type': 'text/plain' }, body: 'hiresync_up 1\n' }),
  } as unknown as Metrics;
  const started = await startHttpServer({
    port: 0,
    host: '127.0.0.1',
    db,
    redis: { ping: async () => 'PONG' } as never,
    metrics,
    schedules: async () => ({ schedules: 'ok', missing: [] }),
  });
  servers.push(started);
  return started.port;
}

describe('the Kubernetes example (deploy/kubernetes/)', () => {
  it('is YAML whose every document names its apiVersion, kind and name', () => {
    const all = manifests();
    expect(all.map(({ doc }) => doc.kind).sort()).toEqual(
      expect.arrayContaining(['ConfigMap', 'Deployment', 'Job', 'Secret', 'Service']),
    );
    for (const { file, doc } of all) {
      expect(doc.apiVersion, file).toMatch(/^([a-z0-9.-]+\/)?v\d+(beta\d+|alpha\d+)?$/);
      expect(doc.kind, file).toMatch(/^[A-Z]\w+$/);
      expect(doc.metadata?.name, `${file}: ${doc.kind}`).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    }
  });

  it('probes readiness on the path where hiresync answers its health, 503 when a store does not', async () => {
    const probe = worker().readinessProbe?.httpGet;
    expect(probe?.port).toBe('http');
    const path = probe?.path ?? '';
    const ready = await fetch(`http://127.0.0.1:${await serve('answers')}${path}`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ok', postgres: 'ok', redis: 'ok' });
    const unready = await fetch(`http://127.0.0.1:${await serve('down')}${path}`);
    expect(unready.status).toBe(503);
    // Liveness and start-up only ask that the process listens: a store failing over restarts nothing.
    expect(worker().livenessProbe).toEqual(
      expect.objectContaining({ tcpSocket: { port: 'http' } }),
    );
    expect(worker().startupProbe).toEqual(expect.objectContaining({ tcpSocket: { port: 'http' } }));
  });

  it('scrapes the path where hiresync serves its metrics', async () => {
    const endpoint = only(find('ServiceMonitor', 'hiresync').spec?.endpoints, 'scrape endpoint');
    expect(endpoint.port).toBe('http');
    const scraped = await fetch(`http://127.0.0.1:${await serve('answers')}${endpoint.path}`);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toBe('hiresync_up 1\n');
  });

  it('names as port `http` the one the worker listens on, on an address the kubelet reaches', () => {
    const { listeners, problems } = readListeners(configMap());
    expect(problems).toEqual([]);
    expect(worker().ports).toEqual([{ name: 'http', containerPort: listeners.http.port }]);
    expect(['127.0.0.1', '::1', 'localhost']).not.toContain(listeners.http.host);
    const service = find('Service', 'hiresync');
    expect(service.spec?.ports).toEqual([
      expect.objectContaining({ name: 'http', port: listeners.http.port, targetPort: 'http' }),
    ]);
    expect(service.spec?.selector).toEqual(deployment().spec?.selector?.matchLabels);
    expect(find('ServiceMonitor', 'hiresync').spec?.selector?.matchLabels).toEqual(
      service.metadata.labels,
    );
  });

  it('runs `migrate` in the Job and `worker` in the Deployment, commands the image has', () => {
    const commands = COMMANDS.map((c) => c.name);
    expect(read('Dockerfile')).toMatch(/^ENTRYPOINT \["node", "dist\/src\/cli\.js"\]$/m);
    const migrate = only(podSpec(job()).containers, 'container in the Job');
    expect(migrate.args).toEqual(['migrate']);
    expect(worker().args).toEqual(['worker']);
    for (const c of containers()) {
      // args, not command: the image's entrypoint is the hiresync bin.
      expect(c.command, c.name).toBeUndefined();
      expect(commands, c.name).toContain(c.args?.[0]);
    }
    expect(migrate.image).toBe(worker().image);
    expect(job().spec?.ttlSecondsAfterFinished).toBeGreaterThan(0);
    expect(podSpec(job()).restartPolicy).toBe('Never');
  });

  it('sets only variables hiresync reads, from a Secret holding each key it names', () => {
    const contract = variablesRead();
    const named = [
      ...Object.keys(configMap()),
      ...containers().flatMap((c) => (c.env ?? []).map((e) => e.name)),
      ...secrets()
        .filter((s) => s.metadata.name === 'hiresync')
        .flatMap(secretKeys),
    ];
    for (const name of named) expect(contract, name).toContain(name);
    for (const c of containers()) {
      expect(c.envFrom, c.name).toEqual([{ configMapRef: { name: 'hiresync' } }]);
      for (const { name, valueFrom } of c.env ?? []) {
        const ref = valueFrom?.secretKeyRef;
        expect(ref, name).toBeDefined();
        expect(secretKeys(find('Secret', ref?.name ?? '')), name).toContain(ref?.key);
      }
    }
  });

  it('mounts each certificate file the settings name from a Secret holding it', () => {
    for (const spec of podSpecs()) {
      const c = only(spec.containers, 'container');
      const files = [new URL(settingOf(c, 'DATABASE_URL') ?? '').searchParams.get('sslrootcert')];
      // migrate connects to Postgres alone.
      if (c.name === 'worker') files.push(settingOf(c, 'REDIS_CA_FILE') ?? null);
      for (const file of files) {
        expect(file, c.name).toMatch(/^\//);
        const mount = c.volumeMounts?.find((m) => m.mountPath === posix.dirname(file ?? ''));
        const volume = spec.volumes?.find((v) => v.name === mount?.name);
        const secretName = volume?.secret?.secretName;
        expect(secretName, `${c.name}: ${file}`).toBeDefined();
        expect(secretKeys(find('Secret', secretName ?? ''))).toContain(posix.basename(file ?? ''));
      }
    }
  });

  it('gives the worker a REDIS_URL of the forms hiresync reads, TLS as REDIS_CA_FILE wants', () => {
    const target = parseRedisUrl(settingOf(worker(), 'REDIS_URL') ?? '');
    expect(target.tls).toBe(true);
    expect(settingOf(worker(), 'REDIS_CA_FILE')).toBeDefined();
  });

  it('holds placeholders only in its Secrets', () => {
    for (const secret of secrets()) {
      expect(secret.data, secret.metadata.name).toBeUndefined();
      for (const [key, value] of Object.entries(secret.stringData ?? {})) {
        expect(value, `${secret.metadata.name}.${key}`).toMatch(/REPLACE/);
      }
    }
  });

  it('gives a stopping worker the time its shutdown can take, as the non-root user of the image', () => {
    const timeoutMs = fullFields.HIRESYNC_HTTP_TIMEOUT.parse(configMap().HIRESYNC_HTTP_TIMEOUT);
    // One deadline HIRESYNC_HTTP_TIMEOUT after SIGTERM, a refresh grant on the
    // wire waited for as long again, then the bin's 3 s net before it exits.
    const grace = podSpec(deployment()).terminationGracePeriodSeconds;
    expect(grace).toBeGreaterThanOrEqual((2 * timeoutMs) / 1000 + 3);
    // The image's `node` user is uid 1000 in the official node images.
    expect(read('Dockerfile')).toMatch(/^USER node$/m);
    for (const spec of podSpecs()) {
      expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
    }
  });

  it("wraps deploy/prometheus-rules.yml's rules, unchanged, in a PrometheusRule", async () => {
    const rules = read('deploy/prometheus-rules.yml');
    await expect(renderPrometheusRule(rules)).toMatchFileSnapshot(
      '../../deploy/kubernetes/prometheus-rule.yaml',
    );
    expect(find('PrometheusRule', 'hiresync').spec?.groups).toEqual(parse(rules).groups);
  });
});
