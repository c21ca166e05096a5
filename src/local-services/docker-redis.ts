import { setTimeout as sleep } from 'node:timers/promises';
import { isAlive, runFile } from './processes.js';
import { redisAnswers } from './tcp.js';

/** The image of the demo's Redis container, as docker-compose.yml runs it. */
export const REDIS_IMAGE = 'redis:7-alpine';

/** The label naming the process that started a container (its pid), to find those of killed runs. */
const HOLDER_LABEL = 'hiresync.demo-holder';

/** True when a Docker engine answers the docker CLI within 5 s. */
export async function dockerEngineAnswers(): Promise<boolean> {
  try {
    await runFile('docker', ['version', '--format', '{{.Server.Version}}'], { timeoutMs: 5000 });
    return true;
  } catch {
    return false;
  }
}

/** A Redis container of the demo's own, published on a loopback port, removed when stopped. */
export interface DockerRedis {
  url: string;
  container: string;
  stop(): Promise<void>;
}

/**
 * Runs Redis in a container (`docker run --rm`, no persistence) for a demo
 * on a machine without redis-server, after removing the containers of
 * earlier demos that were killed before they could.
 */
export async function startDockerRedis(): Promise<DockerRedis> {
  const listed = await runFile('docker', [
    'ps',
    '--filter',
    `label=${HOLDER_LABEL}`,
    '--format',
    `{{.ID}} {{.Label "${HOLDER_LABEL}"}}`,
  ]);
  for (const line of listed.trim().split('\n').filter(Boolean)) {
    const [id, pid] = line.split(' ');
    if (id && !isAlive(Number(pid))) await runFile('docker', ['rm', '--force', id]).catch(() => {});
  }
  const container = (
    await runFile(
      'docker',
      [
        'run',
        '--detach',
        '--rm',
        '--label',
        `${HOLDER_LABEL}=${process.pid}`,
        '--publish',
        '127.0.0.1::6379',
        REDIS_IMAGE,
        'redis-server',
        '--save',
        '',
        '--appendonly',
        'no',
      ],
      { timeoutMs: 300_000 },
    )
  ).trim();
  const stop = async () => {
    await runFile('docker', ['rm', '--force', container]).catch(() => {});
  };
  try {
    const published = (await runFile('docker', ['port', container, '6379/tcp'])).trim();
    const port = Number(published.split('\n')[0]?.split(':').pop());
    const deadline = Date.now() + 30_000;
    while (!(await redisAnswers('127.0.0.1', port))) {
      if (Date.now() > deadline) throw new Error(`the Redis container ${container} did not answer`);
      await sleep(100);
    }
    return { url: `redis://127.0.0.1:${port}`, container, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
