import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ANALYTICS_VIEWS,
  analyticsSelect,
} from '../../../src/warehouse/analytics/analytics-views.js';

const DOC = readFileSync(new URL('../../../docs/analytics.md', import.meta.url), 'utf8');

/** The interface's fixed first columns (../shared/interface.md, "Analytics (fourth edition)"). */
const FIXED: Record<string, string[]> = {
  source_of_hire: ['source_id', 'source_name', 'source_type', 'applications', 'offers', 'hires'],
  pipeline_conversion: [
    'job_id',
    'stage_id',
    'stage_name',
    'stage_order',
    'entered',
    'moved_on',
    'rejected',
    'still_there',
  ],
  time_to_hire: [
    'application_id',
    'job_id',
    'applied_at',
    'first_offer_at',
    'hired_at',
    'days_to_offer',
    'days_to_hire',
  ],
  offer_acceptance: ['job_id', 'month', 'accepted', 'declined', 'acceptance_rate'],
};

describe('the analytics views', () => {
  it('start with the columns the interface fixes', () => {
    for (const [name, first] of Object.entries(FIXED)) {
      const view = ANALYTICS_VIEWS.find((v) => v.name === name);
      expect(
        view?.columns.slice(0, first.length).map((c) => c.name),
        name,
      ).toEqual(first);
    }
    const names = ANALYTICS_VIEWS.map((v) => v.name);
    for (const name of ['time_in_stage', 'time_to_fill', 'rejection_reasons', 'diversity_funnel']) {
      expect(names).toContain(name);
    }
  });

  it('differ between one account and all accounts only in the account condition and the leading account column', () => {
    for (const view of ANALYTICS_VIEWS) {
      const one = analyticsSelect(view, { account: 'acme' });
      const all = analyticsSelect(view, 'all accounts');
      expect(one).not.toContain('hiresync.accounts');
      expect(all).not.toContain("'acme'");
      const normal = (text: string, condition: string) =>
        text.replaceAll(condition, '<account>').replace(/^select v\.account, /, 'select ');
      expect(normal(one, "account = 'acme'"), view.name).toBe(
        normal(all, "(account = 'default' or account in (select name from hiresync.accounts))"),
      );
    }
  });

  it('quote an account name as a literal, whatever it holds', () => {
    const text = analyticsSelect(ANALYTICS_VIEWS[0] as (typeof ANALYTICS_VIEWS)[number], {
      account: "o'brien",
    });
    expect(text).toContain("account = 'o''brien'");
  });

  it('are each documented in docs/analytics.md with every column', () => {
    for (const view of ANALYTICS_VIEWS) {
      const section = DOC.split(`\n### ${view.name}\n`)[1]?.split('\n### ')[0];
      expect(section, view.name).toBeDefined();
      for (const column of view.columns)
        expect(section, `${view.name}.${column.name}`).toContain(`| \`${column.name}\` |`);
    }
  });
});
