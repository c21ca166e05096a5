import type { ConnectCallbackOutcome } from '../accounts/connect-callback.js';
import type { Logger } from '../logger.js';
import { redactSecrets } from '../secret.js';
import {
  connectedPage,
  connectFailedPage,
  linkRefusedPage,
  malformedAnswerPage,
  stateRefusedPage,
  storedDataPage,
  vendorErrorPage,
} from './connect-messages.js';
import type { ConnectPage } from './connect-pages.js';

/** The page answering a connect link's callback, its outcome logged. */
export function callbackPage(outcome: ConnectCallbackOutcome, logger: Logger): ConnectPage {
  switch (outcome.kind) {
    case 'state refused': {
      const { refusal } = outcome;
      logger.info(
        { account: 'account' in refusal ? refusal.account : undefined, refused: refusal.kind },
        'connect callback refused',
      );
      return stateRefusedPage(refusal);
    }
    case 'malformed':
      return malformedAnswerPage(outcome.account, outcome.problem);
    case 'vendor error':
      logger.info(
        { account: outcome.account, error: outcome.error },
        'connect callback: authorization refused',
      );
      return vendorErrorPage(outcome.account, outcome.error, outcome.description);
    case 'link refused':
      return linkRefusedPage(outcome.refusal);
    case 'stored data':
      // The counts are the operator's to see, not the link holder's.
      logger.warn(
        { account: outcome.account, err: outcome.error },
        'connect callback refused: data stored',
      );
      return storedDataPage(outcome.account);
    case 'failed':
      logger.warn(
        { account: outcome.account, err: outcome.error },
        'connect callback: the account could not be connected',
      );
      return connectFailedPage(outcome.account, redactSecrets(outcome.error.message));
    case 'connected':
      return connectedPageOf(outcome, logger);
  }
}

function connectedPageOf(
  outcome: Extract<ConnectCallbackOutcome, { kind: 'connected' }>,
  logger: Logger,
): ConnectPage {
  const { name, account, previousState, unfinished, notScheduled } = outcome;
  if (unfinished === undefined) {
    logger.info({ account: name, previousState }, 'account connected through a connect link');
  } else {
    logger.warn(
      { account: name, previousState, unfinished },
      'account connected through a connect link, but its schema is not ready',
    );
  }
  if (notScheduled) {
    logger.warn(
      { account: name, err: notScheduled },
      'connected account not scheduled at once; the schedules pick it up within a minute',
    );
  }
  return connectedPage(account, name, previousState, unfinished);
}
