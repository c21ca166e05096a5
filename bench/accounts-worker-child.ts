/**
 * One worker process of the accounts benchmark: the worker command's code path
 * (createApp with the registered accounts, then startWorker on the shared
 * queue) without its schedules and HTTP server, so that the queue holds only
 * the runs the benchmark queues. Configured by its environment, as the worker
 * is; prints `ready` once its BullMQ worker is connected, and on SIGTERM
 * finishes the pages in hand, closes and exits 0.
 */
import { createApp } from '../src/app.js';
import { registryOf } from '../src/commands/account-options.js';
import { loadConfig } from '../src/config/load-config.js';
import { createLogger } from '../src/logger.js';
import { RESOURCE_NAMES } from '../src/resources/index.js';

const config = loadConfig(process.env, RESOURCE_NAMES);
const app = createApp(
  config,
  createLogger({ level: config.logLevel, destination: process.stderr }),
  { defaultMetrics: false, registry: registryOf(config) },
);
const worker = app.startWorker();
await worker.waitUntilReady();
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  void app.close().finally(() => process.exit(0));
});
