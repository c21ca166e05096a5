import { z } from 'zod';
import { Secret } from '../secret.js';

/** Fewest characters of a webhook secret: shorter ones are guessable, and too short to redact. */
export const WEBHOOK_SECRET_MIN_LENGTH = 8;

/** Why `secret` cannot be a webhook secret, or undefined when it can. Never quotes it. */
export function webhookSecretProblem(secret: string): string | undefined {
  return secret.length < WEBHOOK_SECRET_MIN_LENGTH
    ? `a webhook secret must be at least ${WEBHOOK_SECRET_MIN_LENGTH} characters (make one with: openssl rand -hex 32, and give the same to the vendor)`
    : undefined;
}

/**
 * `HIRESYNC_WEBHOOK_SECRET`: the account `default`'s webhook secret (the key
 * the vendor signs its deliveries to `…/webhooks/default` with); unset, that
 * endpoint refuses every delivery. Surrounding spaces are ignored. Never
 * quoted in a problem.
 */
export const webhookSecret = z
  .string()
  .optional()
  .transform((text, ctx) => {
    const value = text?.trim() ?? '';
    if (value === '') return undefined;
    const problem = webhookSecretProblem(value);
    if (problem) {
      ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    }
    return new Secret(value);
  });
