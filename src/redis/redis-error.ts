/**
 * Why Redis could not be reached, for "cannot reach Redis (…)": the error's
 * code and message. When none of a Cluster's nodes answered, ioredis says
 * only "Failed to refresh slots cache." (its ClusterAllFailedError) and keeps
 * the cause in `lastNodeError`: that one is named instead, so that a wrong
 * or missing password reads WRONGPASS or NOAUTH as it does for one server.
 */
export function redisFailureReason(error: unknown): string {
  const cause = (error as { lastNodeError?: unknown } | undefined)?.lastNodeError;
  const e = (cause instanceof Error ? cause : error) as { code?: string; message?: string };
  const message = e.message ?? String(error);
  // A code the message already names (connect ECONNREFUSED …) is not said twice.
  return e.code && !message.includes(e.code) ? `${e.code}: ${message}` : message;
}
