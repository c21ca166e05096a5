import type { LinkRefusal, StateRefusal } from '../accounts/connect-states.js';
import type { AccountInfo } from '../accounts/stored-account.js';
import { excerpt, redactSecrets } from '../secret.js';
import type { ConnectPage } from './connect-pages.js';

const NEW_LINK = 'Ask the person who sent you the link for a new one.';
const NOTHING_CHANGED = 'Nothing was changed.';
const START_OVER =
  'To try again, open the connect link you were sent once more (it stays valid until it is used or expires).';

/** An instant as the pages print it: `2026-12-03 04:30 UTC`. */
function when(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** The page of a link that does not open, or can no longer be used. */
export function linkRefusedPage(refusal: LinkRefusal): ConnectPage {
  switch (refusal.kind) {
    case 'forged':
      return {
        status: 404,
        title: 'This link is not valid',
        paragraphs: [
          'This address is not a connect link hiresync made: its signature does not match (it may have been cut short or changed when it was copied).',
          `${NOTHING_CHANGED} ${NEW_LINK}`,
        ],
      };
    case 'unknown':
      return {
        status: 404,
        title: 'This link is not known',
        paragraphs: [
          'This connect link is not known to this hiresync deployment (it may belong to another one, or have been withdrawn).',
          `${NOTHING_CHANGED} ${NEW_LINK}`,
        ],
      };
    case 'used':
      return {
        status: 410,
        title: 'This link was used already',
        paragraphs: [
          `A connect link works once, and this one connected the account ${refusal.account} on ${when(refusal.usedAt)}.`,
          `${NOTHING_CHANGED} If the account needs connecting again, ask the person who sent you the link for a new one.`,
        ],
      };
    case 'expired':
      return {
        status: 410,
        title: 'This link has expired',
        paragraphs: [
          `This connect link for the account ${refusal.account} was valid until ${when(refusal.expiredAt)}.`,
          `${NOTHING_CHANGED} ${NEW_LINK}`,
        ],
      };
    case 'withdrawn':
      return {
        status: 410,
        title: 'This link was withdrawn',
        paragraphs: [
          `A newer connect link for the account ${refusal.account} was made on ${when(refusal.withdrawnAt)}, and it withdrew this one.`,
          `${NOTHING_CHANGED} Use the newest link you were sent, or ask the person who sent you this one for a new one.`,
        ],
      };
    case 'not partner':
      return {
        status: 409,
        title: 'This link can no longer be used',
        paragraphs: [
          `The account ${refusal.account} was registered since the link was made with credentials of another kind, so it is not connected through an authorization.`,
          `${NOTHING_CHANGED} ${NEW_LINK}`,
        ],
      };
    case 'removed':
      return {
        status: 410,
        title: 'This link can no longer be used',
        paragraphs: [
          `The account ${refusal.account} was removed from hiresync after the link was made.`,
          `${NOTHING_CHANGED} ${NEW_LINK}`,
        ],
      };
  }
}

/** The page of a callback whose state is refused. */
export function stateRefusedPage(refusal: StateRefusal): ConnectPage {
  switch (refusal.kind) {
    case 'unknown state':
      return {
        status: 400,
        title: 'This answer was not expected',
        paragraphs: [
          'This page was opened with an authorization answer whose state this hiresync never issued (or with none): it does not come from opening a connect link here, so it is ignored.',
          `${NOTHING_CHANGED} To connect an account, open the connect link you were sent.`,
        ],
      };
    case 'replayed':
      return {
        status: 409,
        title: 'This answer was received already',
        paragraphs: [
          `Each authorization answer is accepted once, and this one (for the account ${refusal.account}) arrived before: reloading this page, or going back to it, does not repeat it.`,
          refusal.linkUsed
            ? `${NOTHING_CHANGED} The account was connected by its link; nothing more is needed.`
            : `${NOTHING_CHANGED} ${START_OVER}`,
        ],
      };
    case 'other browser':
      return {
        status: 403,
        title: 'Open the link again in this browser',
        paragraphs: [
          `This authorization for the account ${refusal.account} was started in another browser (or this browser did not keep its cookie): a connect link completes only in the browser that opened it.`,
          `${NOTHING_CHANGED} Open the connect link you were sent again, in the browser you approve with (it stays valid until it is used or expires).`,
        ],
      };
    case 'state expired':
      return {
        status: 400,
        title: 'This authorization took too long',
        paragraphs: [
          `More than 15 minutes passed between opening the connect link for the account ${refusal.account} and coming back here.`,
          `${NOTHING_CHANGED} ${START_OVER}`,
        ],
      };
    default:
      return linkRefusedPage(refusal);
  }
}

/** The page of a callback carrying the authorization server's `error` (RFC 6749 4.1.2.1). */
export function vendorErrorPage(
  account: string,
  error: string,
  description: string | undefined,
): ConnectPage {
  const said = excerpt(
    redactSecrets(description === undefined ? error : `${error}: ${description}`),
    300,
  );
  return {
    status: 400,
    title: 'The authorization was not granted',
    paragraphs: [
      `The authorization server did not authorize the app for the account ${account}; it answered: ${said}.`,
      error === 'access_denied'
        ? `${NOTHING_CHANGED} If this was not intended, ${START_OVER.charAt(0).toLowerCase()}${START_OVER.slice(1)}`
        : `${NOTHING_CHANGED} ${START_OVER}`,
    ],
  };
}

/** The page of a callback with the right state but neither a code nor an error, or either twice. */
export function malformedAnswerPage(account: string, problem: string): ConnectPage {
  return {
    status: 400,
    title: 'The authorization answer is malformed',
    paragraphs: [
      `The answer the authorization server sent back for the account ${account} is not usable: ${problem}.`,
      `${NOTHING_CHANGED} ${START_OVER}`,
    ],
  };
}

/** The page of a code that could not be exchanged, or a token that could not be stored (`message` redacted here). */
export function connectFailedPage(account: string, message: string): ConnectPage {
  return {
    status: 502,
    title: 'The account could not be connected',
    paragraphs: [
      `The authorization for the account ${account} was granted, but hiresync could not complete it: ${excerpt(redactSecrets(message), 500)}`,
      `${NOTHING_CHANGED} ${START_OVER} If it fails again, tell the person who sent you the link what this page says.`,
    ],
  };
}

/** The page of a connected account (`unfinished`: why its schema is not ready yet). */
export function connectedPage(
  account: AccountInfo | undefined,
  name: string,
  previousState: AccountInfo['state'] | undefined,
  unfinished?: string,
): ConnectPage {
  const again = previousState === undefined ? '' : ' again';
  if (unfinished !== undefined) {
    return {
      status: 200,
      title: `The account ${name} is connected`,
      paragraphs: [
        `hiresync is authorized${again} to read the account ${name}, but could not finish setting it up: ${excerpt(redactSecrets(unfinished), 500)}`,
        'Nothing more is needed from you: tell the person who sent you the link what this page says, so that they finish it.',
      ],
    };
  }
  return {
    status: 200,
    title: `The account ${name} is connected`,
    paragraphs: [
      account?.state === 'disabled'
        ? `hiresync is authorized${again} to read the account ${name}. The account is disabled on hiresync's side: its data is read once its operator enables it.`
        : `hiresync is authorized${again} to read the account ${name}; ${again ? 'its syncs resume' : 'its first sync starts'} within a minute.`,
      'You can close this page.',
    ],
  };
}

/**
 * The page of a link whose account's name holds rows of an earlier
 * registration (removed without --drop-data) that the link may not take
 * over: what they are goes to the operator's log, not to the link holder.
 */
export function storedDataPage(account: string): ConnectPage {
  return {
    status: 409,
    title: 'This account cannot be connected yet',
    paragraphs: [
      `hiresync still holds data stored under the name ${account} by an earlier registration, and does not connect a new authorization to it until its operator decides what becomes of that data.`,
      `${NOTHING_CHANGED} Tell the person who sent you the link what this page says; once they have dealt with it, open the link again (it stays valid until it is used or expires), or use the new one they send you.`,
    ],
  };
}

/** The page when the control schema lacks the tables of connect links (hiresync migrate not run). */
export const NOT_MIGRATED_PAGE: ConnectPage = {
  status: 503,
  title: 'hiresync is not ready',
  paragraphs: [
    "This hiresync deployment's database is not up to date, so connect links cannot be served yet.",
    `${NOTHING_CHANGED} Tell the person who sent you the link: its operator must run 'hiresync migrate'. The link stays valid until it expires.`,
  ],
};

/** The page of an unexpected failure (logged with its cause). */
export const INTERNAL_ERROR_PAGE: ConnectPage = {
  status: 500,
  title: 'Something went wrong',
  paragraphs: [
    'hiresync failed while answering this page (its log says why).',
    'Try again in a moment; if it fails again, tell the person who sent you the link.',
  ],
};

/** The page of a method other than GET. */
export const METHOD_NOT_ALLOWED_PAGE: ConnectPage = {
  status: 405,
  title: 'Method not allowed',
  paragraphs: ['Open this address in a browser (GET).'],
};
