import type { Checkpoint, ReadPlan } from './ports.js';

// The walks of one run (the plan's: the resource's default walk, then each
// extra walk), read as one run; the checkpoint names the walk its `next` URL
// belongs to.

/** The first-page URL of walk `index` (past the last: the default walk's), the updated filter verbatim after it. */
export function walkFirstUrl(plan: ReadPlan, index: number, updatedQuery?: string): string {
  const url = (plan.walks[index] ?? plan.walks[0]).firstUrl;
  // The updated filter goes as configured, only {since} percent-encoded.
  return updatedQuery ? `${url}${url.includes('?') ? '&' : '?'}${updatedQuery}` : url;
}

/**
 * The index of the walk a checkpoint is in: the one its query names when the
 * query is still planned, else its index (absent, from older code: 0).
 */
export function walkIndexOf(checkpoint: Checkpoint, plan: ReadPlan): number {
  if (checkpoint.walkQuery !== undefined) {
    const named = plan.walks.findIndex((walk) => walk.query === checkpoint.walkQuery);
    if (named > 0) return named;
  }
  return checkpoint.walk ?? 0;
}

/** `checkpoint` moved to the start of walk `index` (its first page, or `url` when given). */
export function atWalkStart(
  checkpoint: Checkpoint,
  index: number,
  plan: ReadPlan,
  url?: string,
): Checkpoint {
  const { walkQuery: _, ...rest } = checkpoint;
  const query = plan.walks[index]?.query;
  return {
    ...rest,
    walk: index,
    ...(query === undefined ? {} : { walkQuery: query }),
    nextUrl: url ?? walkFirstUrl(plan, index, checkpoint.updatedQuery),
    updatedAt: new Date().toISOString(),
  };
}

/** Whether the checkpoint's `nextUrl` is its walk's first page (so not a cursor that may go stale). */
export function atFirstPageOfWalk(checkpoint: Checkpoint, plan: ReadPlan): boolean {
  if (checkpoint.pagesDone === 0) return true;
  const index = walkIndexOf(checkpoint, plan);
  if (index === 0) return false;
  return checkpoint.nextUrl === walkFirstUrl(plan, index, checkpoint.updatedQuery);
}
