import { hostname } from 'node:os';
import { type DestinationStream, type Logger, pino } from 'pino';
import { redactSecrets } from './secret.js';

export type { Logger } from 'pino';

/** Fields that may carry a secret wherever they appear in a log object. */
const REDACT_PATHS = [
  'authorization',
  'Authorization',
  '*.authorization',
  '*.Authorization',
  'headers.authorization',
  '*.headers.authorization',
  'clientSecret',
  '*.clientSecret',
  'apiKey',
  '*.apiKey',
  'accessToken',
  '*.accessToken',
  'access_token',
  '*.access_token',
  'password',
  '*.password',
];

interface SerializedError {
  type: string;
  message: string;
  stack?: string | undefined;
  code?: unknown;
  status?: unknown;
  path?: unknown;
  cause?: SerializedError;
}

/**
 * Serializes an error by an allow-list of fields, so that properties such as
 * got's `options` (which hold request headers) never reach a log line.
 */
export function serializeError(value: unknown, depth = 0): SerializedError {
  if (!(value instanceof Error)) return { type: typeof value, message: String(value) };
  const e = value as Error & { code?: unknown; status?: unknown; path?: unknown };
  const out: SerializedError = {
    type: e.name,
    message: redactSecrets(e.message),
    stack: e.stack === undefined ? undefined : redactSecrets(e.stack),
  };
  if (e.code !== undefined) out.code = e.code;
  if (typeof e.status === 'number') out.status = e.status;
  if (typeof e.path === 'string') out.path = e.path;
  if (e.cause !== undefined && depth < 4) out.cause = serializeError(e.cause, depth + 1);
  return out;
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** pino level; default `info`. */
  level?: string;
  /** Where lines go; default stdout. */
  destination?: DestinationStream;
}

/**
 * The root logger: JSON, one event per line, errors allow-listed, secrets
 * redacted twice: by field name (`redact`), and by value in every written
 * line (`hooks.streamWrite`), so a token the API echoed into an error
 * message, or any other string field, never reaches the log. Every line, a
 * child logger's too, carries `pid` and `hostname` (pino's defaults, which a
 * `base` of its own replaces, so they are named here), to tell the workers of
 * a deployment apart.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: 'hiresync', pid: process.pid, hostname: hostname() },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: { err: serializeError, error: serializeError },
      timestamp: pino.stdTimeFunctions.isoTime,
      hooks: { streamWrite: redactSecrets },
    },
    options.destination,
  );
}
