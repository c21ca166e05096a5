import type { Funnel, FunnelApplication } from './funnel.js';
import {
  type AnalyticsRecords,
  type ApiRecord,
  bigintOf,
  byId,
  nestedOf,
  rate,
  textOf,
} from './records.js';

/** An expected row: column name to value (ids as decimal text, times as epoch ms). */
export type Row = Record<string, unknown>;

interface Counts {
  applications: number;
  interviewed: number;
  offers: number;
  hires: number;
}

function countsOf(applications: readonly FunnelApplication[]): Counts {
  return {
    applications: applications.length,
    interviewed: applications.filter((a) => a.interviewed).length,
    offers: applications.filter((a) => a.offered).length,
    hires: applications.filter((a) => a.hired).length,
  };
}

/** Funnel applications grouped by a key (null included as its own group). */
function groupApplications(
  funnel: Funnel,
  keyOf: (a: FunnelApplication) => string | null,
): Map<string | null, FunnelApplication[]> {
  const groups = new Map<string | null, FunnelApplication[]>();
  for (const application of funnel.applications.values()) {
    const key = keyOf(application);
    const group = groups.get(key);
    if (group) group.push(application);
    else groups.set(key, [application]);
  }
  return groups;
}

/** 1. `source_of_hire`: per source_id of the funnel applications. */
export function sourceOfHire(records: AnalyticsRecords, funnel: Funnel): Row[] {
  const sources = byId(records.sources);
  const groups = groupApplications(funnel, (a) => bigintOf(a.record.source_id));
  return [...groups].map(([sourceId, group]) => {
    const source = sourceId === null ? undefined : sources.get(sourceId);
    const c = countsOf(group);
    return {
      source_id: sourceId,
      // The list's `name` is hiresync's public_name (a nested source's own key).
      source_name: textOf(source?.public_name ?? source?.name),
      source_type: textOf(nestedOf(source, 'type', 'name')),
      ...c,
      interview_rate: rate(c.interviewed, c.applications),
      offer_rate: rate(c.offers, c.applications),
      hire_rate: rate(c.hires, c.applications),
    };
  });
}

/** 2. `source_of_hire_by_referrer`: per referrer_id. */
export function sourceOfHireByReferrer(records: AnalyticsRecords, funnel: Funnel): Row[] {
  const referrers = byId(records.referrers);
  const groups = groupApplications(funnel, (a) => bigintOf(a.record.referrer_id));
  return [...groups].map(([referrerId, group]) => {
    const c = countsOf(group);
    return {
      referrer_id: referrerId,
      referrer_name: textOf(referrerId === null ? null : referrers.get(referrerId)?.name),
      ...c,
      hire_rate: rate(c.hires, c.applications),
    };
  });
}

/** The job board of an application's job post (null without a post, or a post without a board). */
function boardOfApplication(posts: Map<string, ApiRecord>, application: ApiRecord): string | null {
  const postId = bigintOf(application.job_post_id);
  return postId === null ? null : bigintOf(posts.get(postId)?.job_board_id);
}

/** 3. `source_of_hire_by_job_board`: per board reached through the application's job post. */
export function sourceOfHireByJobBoard(records: AnalyticsRecords, funnel: Funnel): Row[] {
  const posts = byId(records.job_posts);
  const boards = byId(records.job_boards);
  const groups = groupApplications(funnel, (a) => boardOfApplication(posts, a.record));
  return [...groups].map(([boardId, group]) => {
    const c = countsOf(group);
    return {
      job_board_id: boardId,
      job_board_name: textOf(boardId === null ? null : boards.get(boardId)?.company_name),
      ...c,
      hire_rate: rate(c.hires, c.applications),
    };
  });
}

/** 4. `source_of_hire_by_job`: per job_id. */
export function sourceOfHireByJob(records: AnalyticsRecords, funnel: Funnel): Row[] {
  const jobs = byId(records.jobs);
  const groups = groupApplications(funnel, (a) => a.jobId);
  return [...groups].map(([jobId, group]) => {
    const c = countsOf(group);
    return {
      job_id: jobId,
      job_name: textOf(jobId === null ? null : jobs.get(jobId)?.name),
      ...c,
      hire_rate: rate(c.hires, c.applications),
    };
  });
}

/** A tracking link as hiresync stores it: nested objects or the flat v3 keys. */
export interface StoredLink {
  id: string;
  token: string | null;
  sourceId: string | null;
  creditedToId: string | null;
  jobId: string | null;
  jobPostId: string | null;
  jobBoardId: string | null;
}

/**
 * A tracking link record read as hiresync's table holds it: `credited_to_id`
 * is the nested `credited_to.id`, or the flat shape's `referrer_id` (v3
 * sends links flat); likewise `source_id` and `job_board_id`.
 */
export function storedLink(record: ApiRecord): StoredLink | null {
  const id = bigintOf(record.id);
  if (id === null) return null;
  return {
    id,
    token: textOf(record.token),
    sourceId: bigintOf(nestedOf(record, 'source', 'id')) ?? bigintOf(record.source_id),
    creditedToId: bigintOf(nestedOf(record, 'credited_to', 'id')) ?? bigintOf(record.referrer_id),
    jobId: bigintOf(record.job_id),
    jobPostId: bigintOf(record.job_post_id),
    jobBoardId: bigintOf(nestedOf(record, 'job_board', 'id')) ?? bigintOf(record.job_board_id),
  };
}

function linkMatches(link: StoredLink, application: ApiRecord, board: string | null): boolean {
  const sourceId = bigintOf(application.source_id);
  if (sourceId === null || link.sourceId !== sourceId) return false;
  if (link.creditedToId !== null && link.creditedToId !== bigintOf(application.referrer_id)) {
    return false;
  }
  if (link.jobId === null && link.jobPostId === null && link.jobBoardId === null) return true;
  const postId = bigintOf(application.job_post_id);
  const jobId = bigintOf(application.job_id);
  return (
    (link.jobPostId !== null && link.jobPostId === postId) ||
    (link.jobId !== null && link.jobId === jobId) ||
    (link.jobBoardId !== null && link.jobBoardId === board)
  );
}

/**
 * 5. `source_of_hire_by_tracking_link`: an application matching exactly one
 * link is credited to it; one matching several counts as ambiguous for each.
 */
export function sourceOfHireByTrackingLink(records: AnalyticsRecords, funnel: Funnel): Row[] {
  const posts = byId(records.job_posts);
  const links = records.tracking_links
    .map(storedLink)
    .filter((link): link is StoredLink => link !== null);
  const credited = new Map<string, FunnelApplication[]>();
  const ambiguous = new Map<string, number>();
  for (const application of funnel.applications.values()) {
    const board = boardOfApplication(posts, application.record);
    const matched = links.filter((link) => linkMatches(link, application.record, board));
    if (matched.length === 1 && matched[0]) {
      const list = credited.get(matched[0].id) ?? [];
      list.push(application);
      credited.set(matched[0].id, list);
    } else {
      for (const link of matched) ambiguous.set(link.id, (ambiguous.get(link.id) ?? 0) + 1);
    }
  }
  return links
    .filter((link) => credited.has(link.id) || ambiguous.has(link.id))
    .map((link) => {
      const c = countsOf(credited.get(link.id) ?? []);
      return {
        tracking_link_id: link.id,
        token: link.token,
        source_id: link.sourceId,
        applications: c.applications,
        interviewed: c.interviewed,
        offers: c.offers,
        hires: c.hires,
        ambiguous_applications: ambiguous.get(link.id) ?? 0,
      };
    });
}
