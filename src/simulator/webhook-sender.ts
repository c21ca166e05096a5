/**
 * The vendor's side of webhooks, for tests, benchmarks and the demo: an
 * event's body encoded as the vendor encodes it, its signature, and a
 * delivery to a URL, good or deliberately bad (wrong signature, none, a
 * repeated event id, an oversized body).
 */
import { createHmac, randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** A webhook event: `{"action": …, "payload": …}`. */
export interface WebhookEventBody {
  action: string;
  payload: unknown;
}

/**
 * The body of `event` as the vendor sends it: JSON with every character
 * outside printable ASCII, and `<`, `>` and `&`, escaped as `\uXXXX` (the
 * vendor's encoder does so; `<p>` is sent as `\u003cp\u003e`). The signature
 * is computed over exactly these bytes.
 */
export function encodeWebhookBody(event: WebhookEventBody): string {
  return JSON.stringify(event).replace(
    /[^\x20-\x7e]|[<>&]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** The `Signature` header of `body` under `secret`: `sha256 <hex of HMAC-SHA256>`. */
export function webhookSignature(body: string | Buffer, secret: string): string {
  return `sha256 ${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** How a delivery is made, and spoiled. */
export interface WebhookDelivery {
  /** The body as sent: an event (encoded by {@link encodeWebhookBody}) or raw bytes. */
  body: WebhookEventBody | string | Buffer;
  /** The secret it is signed with; with `signature` too, ignored. */
  secret?: string;
  /** The `Signature` header as given (a wrong one); null: none sent. */
  signature?: string | null;
  /** `Greenhouse-Event-ID`: default a fresh UUID; null: none sent. */
  eventId?: string | null;
  /** Request timeout. Default 10 s. */
  timeoutMs?: number;
}

/** The endpoint's answer. */
export interface WebhookAnswer {
  status: number;
  text: string;
  /** The event id sent (null when none). */
  eventId: string | null;
  /** From the request's start to the answer's end, in ms. */
  ms: number;
}

/**
 * Delivers one webhook to `url` with POST, as the vendor does (Content-Type
 * application/json, the signature, the event id), and resolves with the
 * answer. An answer that comes before the body is all sent (413) is the
 * answer, whatever becomes of the rest of the body.
 */
export function sendWebhook(url: string | URL, delivery: WebhookDelivery): Promise<WebhookAnswer> {
  const target = new URL(url);
  const { body } = delivery;
  const bytes = Buffer.isBuffer(body)
    ? body
    : Buffer.from(typeof body === 'string' ? body : encodeWebhookBody(body), 'utf8');
  const signature =
    delivery.signature !== undefined
      ? delivery.signature
      : delivery.secret === undefined
        ? null
        : webhookSignature(bytes, delivery.secret);
  const eventId = delivery.eventId === undefined ? randomUUID() : delivery.eventId;
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': bytes.length,
    'user-agent': 'hiresync-simulator',
    ...(signature === null ? {} : { signature }),
    ...(eventId === null ? {} : { 'greenhouse-event-id': eventId }),
  };
  const started = performance.now();
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<WebhookAnswer>((resolve, reject) => {
    let answered = false;
    const req = request(target, { method: 'POST', headers, agent: false }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          text: Buffer.concat(chunks).toString('utf8'),
          eventId,
          ms: performance.now() - started,
        }),
      );
    });
    req.setTimeout(delivery.timeoutMs ?? 10_000, () =>
      req.destroy(new Error(`no answer from ${target.origin} in time`)),
    );
    req.on('error', (error) => {
      // The server may close while the rest of a refused body is on its way.
      if (!answered) reject(error);
    });
    req.end(bytes);
  });
}
