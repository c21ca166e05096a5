import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { type DestinationStream, type Logger, pino } from 'pino';
import type * as PinoPretty from 'pino-pretty';
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

/** How log lines are written: pino's JSON, or one human line per event (LOG_FORMAT). */
export type LogFormat = 'json' | 'pretty';

/** Where log lines go; `isTTY` true on a terminal. */
export type LogDestination = DestinationStream & { readonly isTTY?: boolean | undefined };

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** pino level; default `info`. */
  level?: string;
  /** Where lines go; default stdout (by pino's own writer). */
  destination?: LogDestination;
  /**
   * `json` or `pretty`; default (undefined): pretty when `destination` is a
   * terminal, else JSON.
   */
  format?: LogFormat | undefined;
}

/** The text of a serialized error and its causes, on one line. */
function describeError(error: SerializedError): string {
  const cause = error.cause === undefined ? '' : ` (cause: ${describeError(error.cause)})`;
  return `${error.type}: ${error.message}${cause}`;
}

function isSerializedError(value: unknown): value is SerializedError {
  return typeof value === 'object' && value !== null && 'message' in value && 'type' in value;
}

/**
 * pino-pretty's prettifier, as a destination written synchronously: not its
 * transport (a worker thread, writing later), so that a log line reaches
 * `target` at once, where a terminal's progress line is cleared around it
 * (commands/terminal.ts). One line per event: time, level, message, an
 * error's type and message (its stack stays in the JSON format), then the
 * event's fields (account, resource, runId, page, …) as JSON; `pid`,
 * `hostname` and `service` are left out. Loaded only when used.
 */
function prettyDestination(target: LogDestination, colorize: boolean): LogDestination {
  const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  const prettify = prettyFactory({
    colorize,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service,err,error',
    messageFormat: (log, messageKey) => {
      const errors = [log.err, log.error].filter(isSerializedError);
      const message = String(log[messageKey] ?? '');
      // logger.error(err) takes the error's message as its own: said once.
      const own = errors.some((e) => e.message === message) ? '' : message;
      return [own, ...errors.map(describeError)].filter(Boolean).join(': ');
    },
  });
  // The line was redacted as JSON (hooks.streamWrite); once more as written, unescaped.
  return {
    isTTY: target.isTTY,
    write: (line: string) => target.write(redactSecrets(prettify(line))),
  };
}

/**
 * The root logger: JSON (or, on a terminal, pretty: see `format`), one event
 * per line, errors allow-listed, secrets redacted twice: by field name
 * (`redact`), and by value in every written
 * line (`hooks.streamWrite`), so a token the API echoed into an error
 * message, or any other string field, never reaches the log. Every line, a
 * child logger's too, carries `pid` and `hostname` (pino's defaults, which a
 * `base` of its own replaces, so they are named here), to tell the workers of
 * a deployment apart.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const { destination } = options;
  const format = options.format ?? (destination?.isTTY === true ? 'pretty' : 'json');
  const target =
    format === 'json'
      ? destination
      : prettyDestination(
          destination ?? process.stdout,
          (destination ?? process.stdout).isTTY === true,
        );
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: 'hiresync', pid: process.pid, hostname: hostname() },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: { err: serializeError, error: serializeError },
      timestamp: pino.stdTimeFunctions.isoTime,
      hooks: { streamWrite: redactSecrets },
    },
    target,
  );
}
