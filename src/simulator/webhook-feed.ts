import type { Dataset } from './dataset.js';
import { deleteRecord, updateRecord } from './webhook-events.js';
import { sendWebhook, type WebhookEventBody } from './webhook-sender.js';

/** Options of {@link startWebhookFeed}. */
export interface WebhookFeedOptions {
  /** The data changed (an account's dataset). */
  dataset: Dataset;
  /** Where the events go: a worker's `…/webhooks/<account>`. */
  url: string;
  /** The account's webhook secret, which signs each delivery. */
  secret: string;
  /** Time between two changes, in ms. */
  everyMs: number;
  /** Told of each delivery (one line, for the simulator's output). */
  onDelivery?: (line: string) => void;
}

/** The changes made in turn: deletions the vendor announces, and updates. */
const STEPS: ReadonlyArray<{ kind: 'delete' | 'update'; resource: string }> = [
  { kind: 'delete', resource: 'candidates' },
  { kind: 'update', resource: 'jobs' },
  { kind: 'delete', resource: 'job_posts' },
  { kind: 'update', resource: 'candidates' },
  { kind: 'delete', resource: 'jobs' },
  { kind: 'update', resource: 'applications' },
];

/** The highest index of `resource` still present, or undefined. */
function lastPresent(dataset: Dataset, resource: string): number | undefined {
  if (!dataset.serves(resource)) return undefined;
  const next = dataset.presentIndexes(resource).next();
  return next.done ? undefined : next.value;
}

/**
 * The vendor's side of webhooks, running: every `everyMs` the dataset
 * changes (a candidate, job or job post removed, or a record updated, in
 * turn) and the matching event is delivered, signed, to `url`. Resources
 * the dataset does not serve are passed over. Stops with `stop()`.
 */
export function startWebhookFeed(options: WebhookFeedOptions): { stop: () => void } {
  const { dataset } = options;
  let step = 0;
  let sending: Promise<void> = Promise.resolve();
  const tick = () => {
    for (let tries = 0; tries < STEPS.length; tries += 1) {
      const next = STEPS[step % STEPS.length] as (typeof STEPS)[number];
      step += 1;
      const index = lastPresent(dataset, next.resource);
      if (index === undefined) continue;
      const event: WebhookEventBody =
        next.kind === 'delete'
          ? deleteRecord(dataset, next.resource, index)
          : updateRecord(dataset, next.resource, index);
      sending = sending.then(async () => {
        try {
          const answer = await sendWebhook(options.url, { body: event, secret: options.secret });
          options.onDelivery?.(
            `webhook ${event.action} (${next.resource} index ${index}) -> ${answer.status} ${answer.text.trim()}`,
          );
        } catch (error) {
          options.onDelivery?.(
            `webhook ${event.action} not delivered: ${(error as Error).message}`,
          );
        }
      });
      return;
    }
  };
  const timer = setInterval(tick, options.everyMs);
  return { stop: () => clearInterval(timer) };
}
