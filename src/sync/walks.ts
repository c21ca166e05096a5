import type { Checkpoint, PageSource } from './ports.js';

// The walks of one run (HIRESYNC_EXTRA_WALKS): the resource's default walk,
// then each extra walk's query, read as one run; the checkpoint names the walk
// its `next` URL belongs to.

/**
 * The walks of a run: the default walk (no query), then each extra walk's
 * query, in order.
 */
export function walksOf(
  extraWalks: readonly string[] | undefined,
): ReadonlyArray<string | undefined> {
  return [undefined, ...(extraWalks ?? [])];
}

/**
 * The index of the walk a checkpoint is in: the one its query names when the
 * query is still configured, else its index (absent, from older code: 0).
 */
export function walkIndexOf(
  checkpoint: Checkpoint,
  walks: ReadonlyArray<string | undefined>,
): number {
  if (checkpoint.walkQuery !== undefined) {
    const named = walks.indexOf(checkpoint.walkQuery);
    if (named > 0) return named;
  }
  return checkpoint.walk ?? 0;
}

/** `checkpoint` moved to the start of walk `index` (its first page, or `url` when given). */
export function atWalkStart(
  checkpoint: Checkpoint,
  index: number,
  walks: ReadonlyArray<string | undefined>,
  source: PageSource,
  url?: string,
): Checkpoint {
  const { walkQuery: _, ...rest } = checkpoint;
  const query = walks[index];
  return {
    ...rest,
    walk: index,
    ...(query === undefined ? {} : { walkQuery: query }),
    nextUrl: url ?? source.firstPageUrl(checkpoint.resource, checkpoint.updatedQuery, query),
    updatedAt: new Date().toISOString(),
  };
}

/** Whether the checkpoint's `nextUrl` is its walk's first page (so not a cursor that may go stale). */
export function atFirstPageOfWalk(
  checkpoint: Checkpoint,
  walks: ReadonlyArray<string | undefined>,
  source: PageSource,
): boolean {
  if (checkpoint.pagesDone === 0) return true;
  const index = walkIndexOf(checkpoint, walks);
  if (index === 0) return false;
  const query = walks[index];
  return (
    checkpoint.nextUrl === source.firstPageUrl(checkpoint.resource, checkpoint.updatedQuery, query)
  );
}
