import { describe, expect, it } from 'vitest';
import { Dataset } from '../../../src/simulator/dataset.js';
import { WORLD_RESOURCES } from '../../../src/simulator/world/world.js';

type Row = Record<string, unknown>;

function world(seed = 1, applications = 300): Dataset {
  return new Dataset({ world: true, flatTrackingLinks: true, seed, counts: { applications } });
}

/** The records a walk of `resource` lists (with the hidden rows when `showHidden`). */
function served(ds: Dataset, resource: string, showHidden = false): Row[] {
  return [...ds.presentIndexes(resource)]
    .filter((i) => ds.listed(resource, i, false, showHidden))
    .map((i) => ds.record(resource, i) as Row);
}

function byId(rows: Row[]): Map<unknown, Row> {
  return new Map(rows.map((r) => [r.id, r]));
}

function groupBy(rows: Row[], key: string): Map<unknown, Row[]> {
  const out = new Map<unknown, Row[]>();
  for (const r of rows) out.set(r[key], [...(out.get(r[key]) ?? []), r]);
  return out;
}

const time = (v: unknown) => (v === null ? null : Date.parse(v as string));

/** Whether link `l` matches application `a` (docs: the source of hire by tracking link). */
function linkMatcher(posts: Map<unknown, Row>) {
  return (a: Row, l: Row) =>
    a.source_id !== null &&
    l.source_id === a.source_id &&
    (l.referrer_id === null || l.referrer_id === a.referrer_id) &&
    ((l.job_post_id !== null && l.job_post_id === a.job_post_id) ||
      (l.job_id !== null && l.job_id === a.job_id) ||
      (l.job_board_id !== null && l.job_board_id === posts.get(a.job_post_id)?.job_board_id) ||
      (l.job_id === null && l.job_post_id === null && l.job_board_id === null));
}

describe('the simulator v3 world', () => {
  it('names only jobs, posts of that job, sources, referrers and users its lists serve', () => {
    const ds = world();
    const jobs = byId(served(ds, 'jobs'));
    const posts = byId(served(ds, 'job_posts'));
    const sources = byId(served(ds, 'sources'));
    const referrers = byId(served(ds, 'referrers'));
    const users = byId(served(ds, 'users', true));
    const apps = served(ds, 'applications');
    expect(apps).toHaveLength(300);
    for (const a of apps) {
      if (a.job_id !== null) expect(jobs.has(a.job_id)).toBe(true);
      if (a.job_post_id !== null) expect(posts.get(a.job_post_id)?.job_id).toBe(a.job_id);
      if (a.source_id !== null) expect(sources.has(a.source_id)).toBe(true);
      if (a.referrer_id !== null) expect(referrers.has(a.referrer_id)).toBe(true);
      if (a.recruiter_id !== null) expect(users.has(a.recruiter_id)).toBe(true);
      expect(['in_process', 'rejected', 'hired', 'converted']).toContain(a.status);
    }
    // Prospects, some on no job; applications with and without a post, source and referrer.
    expect(apps.some((a) => a.prospect === true && a.job_id === null)).toBe(true);
    expect(apps.some((a) => a.prospect === true && a.job_id !== null)).toBe(true);
    expect(apps.some((a) => a.status === 'converted')).toBe(true);
    for (const key of ['job_post_id', 'source_id', 'referrer_id'])
      expect(new Set(apps.map((a) => a[key] === null))).toEqual(new Set([true, false]));
    // Every job has its pipeline: Application Review first, Offer last, 4 to 6 active stages.
    const stages = groupBy(served(ds, 'job_interview_stages'), 'job_id');
    expect([...stages.keys()].sort()).toEqual([...jobs.keys()].sort());
    for (const list of stages.values()) {
      const ordered = [...list].sort((a, b) => Number(a.sort_order) - Number(b.sort_order));
      expect(ordered[0]).toMatchObject({ name: 'Application Review', sort_order: 0 });
      expect(ordered.at(-1)?.name).toBe('Offer');
      const active = ordered.filter((s) => s.active).length;
      expect(active).toBeGreaterThanOrEqual(4);
      expect(active).toBeLessThanOrEqual(6);
    }
    expect(served(ds, 'job_interview_stages').some((s) => s.active === false)).toBe(true);
  });

  it("gives each funnel application stage rows of its job's stages in order, one current row while active", () => {
    const ds = world();
    const stages = byId(served(ds, 'job_interview_stages'));
    const rows = groupBy(served(ds, 'application_stages'), 'application_id');
    let backfilled = 0;
    for (const a of served(ds, 'applications')) {
      const mine = (rows.get(a.id) ?? []).sort((x, y) => Number(x.id) - Number(y.id));
      if (a.prospect) {
        expect(mine).toEqual([]);
        continue;
      }
      expect(mine.length).toBeGreaterThan(0);
      const orders = mine.map((r) => stages.get(r.job_interview_stage_id));
      for (const s of orders) expect(s?.job_id).toBe(a.job_id);
      const sortOrders = orders.map((s) => Number(s?.sort_order));
      expect(sortOrders).toEqual([...sortOrders].sort((x, y) => x - y));
      expect(orders[0]?.name).toBe('Application Review');
      const times = mine
        .flatMap((r) => [time(r.entered_at), time(r.exited_at)])
        .filter((t) => t !== null);
      expect(times).toEqual([...times].sort((x, y) => (x as number) - (y as number)));
      const current = mine.filter((r) => r.current === true);
      const last = mine.at(-1) as Row;
      if (a.status === 'in_process') {
        expect(current).toEqual([last]);
        expect(last.exited_at).toBeNull();
      } else expect(current).toEqual([]);
      if (a.status === 'hired') expect(orders.at(-1)?.name).toBe('Offer');
      if (a.status === 'rejected') expect(time(last.exited_at)).toBe(time(a.rejected_at));
      backfilled += mine.filter((r) => r.entered_at === null && r.exited_at === null).length;
    }
    expect(backfilled).toBeGreaterThan(0);
  });

  it('gives hired applications an accepted latest offer and the opening they filled', () => {
    const ds = world();
    const offers = groupBy(served(ds, 'offers'), 'application_id');
    const openings = served(ds, 'openings');
    const reasons = byId(served(ds, 'close_reasons'));
    const apps = served(ds, 'applications');
    const hired = apps.filter((a) => a.status === 'hired');
    expect(hired.length).toBeGreaterThan(5);
    let filled = 0;
    for (const a of hired) {
      const versions = (offers.get(a.id) ?? []).sort(
        (x, y) => Number(x.version) - Number(y.version),
      );
      const latest = versions.at(-1) as Row;
      expect(latest).toMatchObject({ status: 'Accepted' });
      expect(latest.resolved_at).toMatch(/T12:00:00\.000Z$/);
      for (const older of versions.slice(0, -1)) expect(older.status).toBe('Deprecated');
      const opening = openings.find((o) => o.application_id === a.id);
      if (opening) {
        filled += 1;
        expect(opening.closed_at).not.toBeNull();
        expect(String(reasons.get(opening.close_reason_id)?.name)).toMatch(/^Hire - /);
        expect(opening.job_id).toBe(a.job_id);
        expect(latest.opening_id).toBe(opening.id);
      }
    }
    expect(filled).toBeGreaterThan(0);
    const latestStatuses = [...offers.values()].map(
      (v) => v.sort((x, y) => Number(x.version) - Number(y.version)).at(-1)?.status,
    );
    expect(new Set(latestStatuses)).toEqual(new Set(['Accepted', 'Rejected', 'Created']));
    expect([...offers.values()].some((v) => v.length > 1)).toBe(true);
    // Openings: some closed without a hire, some open, and a job reopened.
    expect(openings.some((o) => o.closed_at !== null && o.application_id === null)).toBe(true);
    expect(openings.some((o) => o.closed_at === null && o.opened_at !== null)).toBe(true);
    const reopened = [...groupBy(openings, 'job_id').values()].some((list) => {
      const closed = list.filter((o) => o.closed_at !== null);
      return list.some(
        (o) =>
          o.closed_at === null &&
          closed.some((c) => (time(o.opened_at) as number) > (time(c.opened_at) as number)),
      );
    });
    expect(reopened).toBe(true);
  });

  it('brings applications through tracking links whose source, referrer and target match them, some matching two links', () => {
    const ds = world();
    const posts = byId(served(ds, 'job_posts'));
    const links = served(ds, 'tracking_links');
    const matches = linkMatcher(posts);
    for (const l of links)
      expect(
        [l.job_id, l.job_post_id, l.job_board_id].filter((v) => v !== null).length,
      ).toBeLessThanOrEqual(1);
    const funnel = served(ds, 'applications').filter((a) => a.prospect === false);
    const counts = funnel.map((a) => links.filter((l) => matches(a, l)).length);
    expect(counts.filter((n) => n === 1).length).toBeGreaterThan(10);
    expect(counts.filter((n) => n >= 2).length).toBeGreaterThan(0);
    // The applications the world brought through a link match that link.
    const state = ds.world?.state;
    for (const [index, app] of (state?.apps ?? []).entries())
      if (app.link >= 0)
        expect(
          matches(
            ds.record('applications', index) as Row,
            ds.record('tracking_links', app.link) as Row,
          ),
        ).toBe(true);
  });

  it('rejects with a reason at a stage, lists the built-in reasons and service users only when asked', () => {
    const ds = world();
    const details = served(ds, 'rejection_details');
    const rejected = served(ds, 'applications').filter((a) => a.status === 'rejected');
    expect(details.map((d) => d.application_id).sort()).toEqual(rejected.map((a) => a.id).sort());
    expect(details.some((d) => d.rejection_reason_id === null)).toBe(true);
    const custom = served(ds, 'rejection_reasons');
    const all = served(ds, 'rejection_reasons', true);
    expect(custom.length).toBeLessThan(all.length);
    const builtIn = all.filter((r) => !custom.some((c) => c.id === r.id));
    expect(new Set(builtIn.map((r) => (r.type as Row).key))).toEqual(
      new Set(['WE_REJECTED_THEM', 'THEY_REJECTED_US', 'NONE_SPECIFIED']),
    );
    expect(details.some((d) => builtIn.some((r) => r.id === d.rejection_reason_id))).toBe(true);
    expect(
      details.every(
        (d) => d.rejection_reason_id === null || all.some((r) => r.id === d.rejection_reason_id),
      ),
    ).toBe(true);
    const users = served(ds, 'users');
    const withService = served(ds, 'users', true);
    expect(withService.length).toBeGreaterThan(users.length);
    expect(
      withService
        .filter((u) => !users.some((v) => v.id === u.id))
        .every((u) => u.primary_email === ''),
    ).toBe(true);
  });

  it('answers EEOC and demographic questions for some applications, with skipped answers, null objects and free text', () => {
    const ds = world();
    const eeoc = served(ds, 'eeoc');
    const apps = served(ds, 'applications');
    expect(eeoc.length).toBeGreaterThan(50);
    expect(eeoc.length).toBeLessThan(apps.length);
    expect(new Set(eeoc.map((e) => e.application_id)).size).toBe(eeoc.length);
    expect(eeoc.some((e) => e.gender === null)).toBe(true);
    expect(eeoc.some((e) => (e.race as Row | null)?.description === null)).toBe(true);
    const questions = served(ds, 'demographic_questions');
    const options = served(ds, 'demographic_answer_options');
    expect(questions.some((q) => q.name === null)).toBe(true);
    expect(options.some((o) => o.name === null)).toBe(true);
    expect(options.filter((o) => o.decline_to_answer === true).length).toBeGreaterThan(0);
    const answers = served(ds, 'demographic_answers');
    const perQuestion = groupBy(answers, 'application_id');
    expect(
      [...perQuestion.values()].some(
        (rows) => new Set(rows.map((r) => r.demographic_question_id)).size < rows.length,
      ),
    ).toBe(true);
    expect(answers.some((a) => a.demographic_answer_option_id === null)).toBe(true);
    expect(answers.some((a) => a.free_form_text !== null)).toBe(true);
    const optionIds = new Set(options.map((o) => o.id));
    for (const a of answers)
      if (a.demographic_answer_option_id !== null)
        expect(optionIds.has(a.demographic_answer_option_id)).toBe(true);
  });

  it('holds, however small, an ambiguous application, a hire and an offer waiting, and advances with one of each change', () => {
    for (const [seed, size] of [1, 2, 3, 4, 5, 6, 7, 8].flatMap(
      (s) =>
        [
          [s, 10],
          [s, 40],
        ] as const,
    )) {
      const ds = world(seed, size);
      const matches = linkMatcher(byId(served(ds, 'job_posts')));
      const links = served(ds, 'tracking_links');
      const apps = served(ds, 'applications').filter((a) => a.prospect === false);
      expect(apps.some((a) => links.filter((l) => matches(a, l)).length >= 2)).toBe(true);
      expect(apps.some((a) => a.status === 'hired')).toBe(true);
      const offers = served(ds, 'offers');
      expect(offers.some((o) => o.status === 'Created')).toBe(true);
      const report = ds.advance();
      for (const kind of ['moved', 'rejected', 'hired', 'added'] as const)
        expect(report[kind].length, `${kind}, seed ${seed}, ${size} applications`).toBeGreaterThan(
          0,
        );
      expect(report.deleted).toBeGreaterThanOrEqual(0);
      expect(report.silentExit).toBeGreaterThanOrEqual(0);
    }
  });

  it('is the same world for the same seed, another for another', () => {
    const snapshot = (ds: Dataset) =>
      WORLD_RESOURCES.map((r) => JSON.stringify(served(ds, r, true)));
    expect(snapshot(world(7))).toEqual(snapshot(world(7)));
    expect(snapshot(world(8))).not.toEqual(snapshot(world(7)));
  });

  it('advances: applications move on (one exit seen only by history), are rejected or hired, arrive and one is deleted, all at a new updated_at', () => {
    const ds = world();
    const before = new Map(WORLD_RESOURCES.map((r) => [r, byId(served(ds, r, true))]));
    const report = ds.advance();
    const at = new Date(report.atMs).toISOString();
    expect(report.moved.length).toBeGreaterThan(0);
    expect(report.rejected.length).toBeGreaterThan(0);
    expect(report.hired.length).toBeGreaterThan(0);
    expect(report.added.length).toBeGreaterThanOrEqual(3);
    const servedNow = (r: string) => byId(served(ds, r, true));
    const apps = servedNow('applications');
    const appId = (index: number) => ds.idOf('applications', index);
    for (const i of report.hired)
      expect(apps.get(appId(i))).toMatchObject({ status: 'hired', updated_at: at });
    for (const i of report.rejected)
      expect(apps.get(appId(i))).toMatchObject({ status: 'rejected', rejected_at: at });
    for (const i of report.added) {
      const created = Date.parse(apps.get(appId(i))?.created_at as string) - report.atMs;
      expect(created).toBeGreaterThanOrEqual(0);
      expect(created).toBeLessThan(report.added.length);
    }
    expect(apps.has(appId(report.deleted))).toBe(false);
    expect(before.get('applications')?.has(appId(report.deleted))).toBe(true);
    const rows = servedNow('application_stages');
    expect([...rows.values()].some((r) => r.application_id === appId(report.deleted))).toBe(false);
    const silent = rows.get(ds.idOf('application_stages', report.silentExit));
    expect(silent).toMatchObject({ current: false, exited_at: null, updated_at: at });
    expect(before.get('application_stages')?.get(silent?.id)).toMatchObject({ current: true });
    for (const i of report.moved) {
      const mine = [...rows.values()].filter((r) => r.application_id === appId(i));
      expect(mine.filter((r) => r.current)).toEqual([expect.objectContaining({ entered_at: at })]);
    }
    // Every record that changed carries the new updated_at, and only those.
    for (const resource of WORLD_RESOURCES) {
      const old = before.get(resource) as Map<unknown, Row>;
      for (const [id, record] of servedNow(resource)) {
        const was = old.get(id);
        if (
          was &&
          JSON.stringify({ ...was, days_in_stage: 0 }) ===
            JSON.stringify({ ...record, days_in_stage: 0 })
        )
          continue;
        // At the advance's time (new applications a millisecond apart from it).
        expect(time(record.updated_at), `${resource} ${id}`).toBeGreaterThanOrEqual(report.atMs);
      }
    }
    // An updated_at=gte filter of the advance's time lists exactly what changed.
    const bound = [{ field: 'updated_at' as const, op: 'gte' as const, at }];
    const changedApps = [...ds.presentIndexes('applications')].filter((i) =>
      ds.withinDates('applications', i, bound),
    );
    expect(changedApps.sort((a, b) => a - b)).toEqual(
      [...report.moved, ...report.rejected, ...report.hired, ...report.added].sort((a, b) => a - b),
    );
  });
});
