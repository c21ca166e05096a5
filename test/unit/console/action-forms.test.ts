import { describe, expect, it } from 'vitest';
import { renderConsolePage } from '../../../src/console/console-page.js';
import { checkReport } from '../../../src/status/check.js';
import { overviewOf } from '../../../src/status/overview.js';
import type {
  AccountReport,
  ResourceReport,
  StatusReport,
} from '../../../src/status/report-types.js';

function resource(name: string): ResourceReport {
  return {
    resource: name,
    state: 'never_run',
    lastRun: null,
    lastSuccess: null,
    lastFinished: null,
    notPermitted: null,
    inFlight: null,
    checkpoint: null,
    error: null,
    action: null,
    synced: true,
    clockSkew: null,
  };
}

function account(name: string, state: string): AccountReport {
  return {
    name,
    authMode: 'partner',
    state,
    lastSuccess: null,
    reauthorization:
      state === 'needs_reauthorization'
        ? { reason: 'its refresh token was refused', action: 'make a connect link' }
        : null,
    credentialsRefused: null,
    problem: null,
    everyResourceRefused: null,
    summary: { succeeded: 0, failed: 0, notPermitted: 0, neverRun: 2, running: 0 },
    resources: [resource('jobs'), resource('offices')],
  };
}

function report(accounts: AccountReport[]): StatusReport {
  const check = checkReport(accounts);
  return {
    generatedAt: '2026-11-26T04:00:00.000Z',
    overview: overviewOf(accounts, check),
    accounts,
    typedViewBlocks: [],
    check,
  };
}

const TOKEN = 'v2.abc.nonce-of-a-render.signature';

/** Each form of a page as `action account[/resource or #link]` (a form without `action` makes a connect link, as before). */
function forms(page: string): string[] {
  return [
    ...page.matchAll(/<form method="post"(?: data-action="([^"]+)")?[^>]*>([\s\S]*?)<\/form>/g),
  ].map(([, action = 'reauthorize', body = '']) => {
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(body)?.[1];
    const resource = field('resource');
    const link = field('link');
    return `${action} ${field('account') ?? '(typed)'}${resource ? `/${resource}` : ''}${link ? `#${link}` : ''}`;
  });
}

/** The "Sync now" buttons of a page, as `account/resource`: each submits its account's form with its resource. */
function syncButtons(page: string): string[] {
  const accounts = new Map(
    [
      ...page.matchAll(/<form method="post" data-action="sync" id="([^"]+)">([\s\S]*?)<\/form>/g),
    ].map(([, id, body = '']) => [id, /name="account" value="([^"]*)"/.exec(body)?.[1]]),
  );
  return [
    ...page.matchAll(
      /<button type="submit" form="([^"]+)" name="resource" value="([^"]+)">Sync now</g,
    ),
  ].map(([, form, resource]) => `${accounts.get(form ?? '')}/${resource}`);
}

const DEPLOYMENT = report([
  account('default', 'enabled'),
  account('alpha', 'enabled'),
  account('paused', 'disabled'),
  account('acme', 'needs_reauthorization'),
]);

const PENDING = [
  {
    id: '17',
    account: 'acme',
    newAccount: false,
    createdAt: '2026-11-26T03:00:00.000Z',
    expiresAt: '2026-12-03T03:00:00.000Z',
  },
  {
    id: '18',
    account: 'newco',
    newAccount: true,
    createdAt: '2026-11-26T03:30:00.000Z',
    expiresAt: '2026-12-03T03:30:00.000Z',
  },
];

describe('the forms of the console actions', () => {
  it('puts each button where the operator expects it: sync now per resource of an enabled account, test on each, disable or enable on registered ones, withdraw per pending link', () => {
    const page = renderConsolePage(DEPLOYMENT, {
      formToken: TOKEN,
      actions: { pendingLinks: PENDING },
    });
    expect(forms(page)).toEqual([
      'invite (typed)',
      'withdraw acme#17',
      'withdraw newco#18',
      'test default',
      'sync default',
      'test alpha',
      'disable alpha',
      'sync alpha',
      'test paused',
      'enable paused',
      'reauthorize acme',
      'test acme',
      'disable acme',
    ]);
    expect(syncButtons(page)).toEqual([
      'default/jobs',
      'default/offices',
      'alpha/jobs',
      'alpha/offices',
    ]);
    // Every form carries the page's token.
    expect(page.match(/name="token" value="v2\.abc\.nonce-of-a-render\.signature"/g)).toHaveLength(
      13,
    );
  });

  it('offers no Sync now for a resource the account no longer syncs', () => {
    const alpha = account('alpha', 'enabled');
    alpha.resources = [resource('jobs'), { ...resource('offices'), synced: false }];
    const page = renderConsolePage(report([alpha]), {
      formToken: TOKEN,
      actions: { pendingLinks: [] },
    });
    expect(syncButtons(page)).toEqual(['alpha/jobs']);
  });

  it('lists pending links by account, when made and when they expire, never a token or URL', () => {
    const page = renderConsolePage(DEPLOYMENT, {
      formToken: TOKEN,
      actions: { pendingLinks: PENDING },
    });
    const section = /<section class="panel" id="pending-links">([\s\S]*?)<\/section>/.exec(
      page,
    )?.[1];
    expect(section).toContain(
      '<td>newco</td>\n<td>a new account</td>\n<td>2026-11-26 03:30:00 UTC</td>\n<td>2026-12-03 03:30:00 UTC</td>',
    );
    expect(section).not.toContain('/connect/');
    const none = renderConsolePage(DEPLOYMENT, { formToken: TOKEN, actions: { pendingLinks: [] } });
    expect(none).toContain('No link waits to be used.');
  });

  it('replaces the new customer’s form by what to set when no link can be made here', () => {
    const page = renderConsolePage(DEPLOYMENT, {
      formToken: TOKEN,
      actions: { pendingLinks: [], inviteUnavailable: 'set HIRESYNC_PUBLIC_URL on the workers' },
    });
    expect(forms(page)).not.toContain('invite (typed)');
    expect(page).toContain(
      'No connect link can be made here: set HIRESYNC_PUBLIC_URL on the workers.',
    );
  });

  it('escapes what a pending link shows', () => {
    const page = renderConsolePage(report([]), {
      formToken: TOKEN,
      actions: { pendingLinks: [{ ...PENDING[0], account: '<b>x</b>' } as (typeof PENDING)[0]] },
    });
    expect(page).not.toContain('<b>x</b>');
    expect(page).toContain('&lt;b&gt;x&lt;/b&gt;');
  });
});
