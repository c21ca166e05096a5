/**
 * What the console's forms do, once serve-console's one guard has taken the
 * POST (login, same origin, a form of its own, a fresh token spent): each
 * action reads its fields, calls the worker's port (the same operation as
 * the command it names), and says what came of it, as a page and as one
 * line of the log.
 */
import { coerceError, HiresyncError } from '../errors.js';
import { redactSecrets } from '../secret.js';
import { type ActionResult, testResultBody } from './action-pages.js';
import type { ConsoleActions, ConsoleLinks, MadeLink } from './action-ports.js';

/** The console's actions: the form's `action` field (absent: `reauthorize`, the forms of earlier releases). */
export const ACTION_NAMES = [
  'reauthorize',
  'invite',
  'withdraw',
  'sync',
  'disable',
  'enable',
  'test',
] as const;
export type ActionName = (typeof ACTION_NAMES)[number];

/** What an action came to: the page to answer, and the one log event that records it. */
export interface ActionAnswer {
  status: number;
  /** A connect link made: the console is shown again with it on top (once). */
  made?: MadeLink;
  /** Why it changed nothing, on top of the console shown again (a link refused, as before). */
  refusal?: string;
  /** Otherwise: a page saying what was done. */
  result?: ActionResult;
  log: {
    level: 'info' | 'warn';
    msg: string;
    fields: { action: string; account?: string; resource?: string; link?: string; outcome: string };
  };
}

/** The ports an action uses. */
export interface ActionPorts {
  links: ConsoleLinks;
  actions: ConsoleActions;
}

type Fields = { account: string; resource: string; link: string };

function done(
  action: ActionName,
  fields: Partial<Fields>,
  outcome: string,
  msg: string,
  result: ActionResult,
): ActionAnswer {
  return {
    status: 200,
    result,
    log: { level: 'info', msg, fields: { action, ...fields, outcome } },
  };
}

/** Runs one action; its refusal (a HiresyncError) is a 409 saying why, any other failure a 503. */
async function perform(action: ActionName, f: Fields, ports: ActionPorts): Promise<ActionAnswer> {
  const { actions } = ports;
  const { account, resource, link } = f;
  switch (action) {
    case 'reauthorize':
    case 'invite': {
      const made =
        action === 'invite' ? await actions.invite(account) : await ports.links.create(account);
      return {
        status: 200,
        made,
        log: {
          level: 'info',
          msg: 'connect link made',
          // The link itself is a credential: its URL is never logged.
          fields: { action, account, outcome: `made, expires ${made.expiresAt}` },
        },
      };
    }
    case 'withdraw': {
      const withdrawn = await actions.withdrawLink(account, link);
      if (!withdrawn) {
        throw new HiresyncError(
          `the link ${link} of ${account} is not pending any more (used, expired, withdrawn or removed): nothing was withdrawn`,
        );
      }
      return done(action, { account, link }, 'withdrawn', 'connect link withdrawn', {
        title: `A connect link for ${account} was withdrawn`,
        lines: [
          `Whoever opens it now reads "This link was withdrawn". Make a new one when the customer needs one.`,
        ],
      });
    }
    case 'sync': {
      const run = await actions.syncNow(account, resource);
      return done(
        action,
        { account, resource },
        run.already ? `already queued (job ${run.jobId})` : `queued (job ${run.jobId})`,
        'run queued',
        {
          title: run.already
            ? `A run of ${account}/${resource} asked from the console is queued already`
            : `A run of ${account}/${resource} is queued`,
          lines: [
            `Job ${run.jobId}: an incremental run (a full one if it never ran), taken by the next free worker; it waits for a scheduled run of the same resource that is running, never runs beside it.`,
            'The console shows its progress and outcome when you reload it.',
          ],
        },
      );
    }
    case 'disable':
    case 'enable': {
      const enabled = action === 'enable';
      const { changed, schedulersRemoved } = await actions.setEnabled(account, enabled);
      const word = enabled ? 'enabled' : 'disabled';
      return done(action, { account }, changed ? word : `already ${word}`, `account ${word}`, {
        title: changed
          ? `The account ${account} is ${word}`
          : `The account ${account} was ${word} already`,
        lines: enabled
          ? [
              'Its schedules are made again now; a run it left unfinished resumes from its checkpoint.',
            ]
          : [
              `Its schedules were removed (${schedulersRemoved}) and its queued runs are skipped; its data and credentials stay. Enable it to sync it again.`,
            ],
      });
    }
    case 'test': {
      const test = await actions.test(account);
      return done(action, { account }, test.passed ? 'passed' : 'failed', 'account tested', {
        title: test.passed
          ? `The credentials of ${account} work`
          : test.resources.length === 0
            ? `The credentials of ${account} do not work`
            : `The credentials of ${account} do not work for everything`,
        lines: [],
        body: testResultBody(test),
        ok: test.passed,
      });
    }
  }
}

/**
 * Carries out the action a guarded form names, with its fields (`account`,
 * `resource`, `link`). An unknown action is a 400; an action the port
 * refuses a 409 saying why (a connect link's refusal shown on top of the
 * console, as before); a failure of Postgres or Redis a 503. Never throws.
 */
export async function runConsoleAction(
  form: URLSearchParams,
  ports: ActionPorts,
): Promise<ActionAnswer> {
  const named = form.get('action') ?? 'reauthorize';
  const fields: Fields = {
    account: (form.get('account') ?? '').trim(),
    resource: form.get('resource') ?? '',
    link: form.get('link') ?? '',
  };
  const action = ACTION_NAMES.find((a) => a === named);
  if (!action) {
    return {
      status: 400,
      result: {
        title: 'Nothing was done',
        lines: [`The console has no action ${JSON.stringify(named.slice(0, 40))}.`],
        ok: false,
      },
      log: {
        level: 'warn',
        msg: 'console action refused',
        fields: { action: named.slice(0, 40), outcome: 'unknown action' },
      },
    };
  }
  try {
    return await perform(action, fields, ports);
  } catch (error) {
    const refused = error instanceof HiresyncError;
    const message = redactSecrets(coerceError(error).message);
    const logged = {
      action,
      account: fields.account,
      ...(action === 'sync' ? { resource: fields.resource } : {}),
      ...(action === 'withdraw' ? { link: fields.link } : {}),
      outcome: `${refused ? 'refused' : 'failed'}: ${message}`,
    };
    const log = { level: 'warn' as const, msg: 'console action refused', fields: logged };
    if (action === 'reauthorize' || action === 'invite') {
      return {
        status: refused ? 409 : 503,
        refusal: `No connect link was made for ${fields.account}: ${message}`,
        log: { ...log, msg: 'no connect link made' },
      };
    }
    return {
      status: refused ? 409 : 503,
      result: {
        title: 'Nothing was done',
        lines: [
          message,
          ...(refused
            ? []
            : ['Check that Postgres and Redis answer (GET /healthz), then try again.']),
        ],
        ok: false,
      },
      log,
    };
  }
}
