/**
 * What a GET of the console asks for in its query: one account's page
 * (`?account=NAME`), or the overview filtered by name and state, a page of it
 * (`?name=acm&state=failing&page=2`). Every value is checked here; the pages
 * escape what they show of it. Pure.
 */

/** Lines of the overview per page. */
export const PAGE_SIZE = 50;

/** The longest name filter taken: an account name has at most 40 characters. */
const MAX_NAME_FILTER = 40;

/** The states the overview can be filtered by, and how the form names them. */
export const STATE_FILTERS = {
  attention: 'needs action',
  failing: 'resources failing',
  enabled: 'enabled',
  disabled: 'disabled',
  needs_reauthorization: 'needs re-authorizing',
  credentials_refused: 'credentials refused',
} as const;

export type StateFilter = keyof typeof STATE_FILTERS;

/** A console GET's query, checked. */
export interface ConsoleQuery {
  /** `?account=NAME`: that account's page (404 when no such account). */
  account: string | undefined;
  /** Part of an account's name (any case); '' for every name. */
  name: string;
  /** '' for every state. */
  state: StateFilter | '';
  /** The page of the overview asked for, from 1 (one past the last is clamped to the last). */
  page: number;
  /** Whether a filter or a page was asked for: the overview, at any number of accounts. */
  overview: boolean;
}

/** Why a query cannot be answered (a 400 page says it). */
export interface QueryRefusal {
  invalid: string;
}

/** The query of a console GET, or why it is refused. Keys other than these are left alone. */
export function parseConsoleQuery(search: URLSearchParams): ConsoleQuery | QueryRefusal {
  const name = (search.get('name') ?? '').trim();
  if (name.length > MAX_NAME_FILTER) {
    return {
      invalid: `the name filter is longer than an account name (${MAX_NAME_FILTER} characters)`,
    };
  }
  const state = search.get('state') ?? '';
  if (state !== '' && !Object.hasOwn(STATE_FILTERS, state)) {
    return {
      invalid: `there is no state filter ${JSON.stringify(state.slice(0, 40))}: one of ${Object.keys(STATE_FILTERS).join(', ')}`,
    };
  }
  const page = search.get('page');
  if (page !== null && !/^[1-9][0-9]{0,5}$/.test(page)) {
    return { invalid: `page ${JSON.stringify(page.slice(0, 40))} is not a page number (1, 2, …)` };
  }
  const account = search.get('account');
  return {
    account: account === null ? undefined : account,
    name,
    state: state as StateFilter | '',
    page: page === null ? 1 : Number(page),
    overview: name !== '' || state !== '' || page !== null,
  };
}

/** The query string (with its `?`) of the overview filtered by `query` at page `page`; `./` for the whole overview. */
export function overviewHref(query: Pick<ConsoleQuery, 'name' | 'state'>, page: number): string {
  const params = new URLSearchParams();
  if (query.name !== '') params.set('name', query.name);
  if (query.state !== '') params.set('state', query.state);
  if (page > 1) params.set('page', String(page));
  const text = params.toString();
  return text === '' ? './' : `?${text}`;
}

/** The query string of account `name`'s page. */
export function accountHref(name: string): string {
  return `?${new URLSearchParams({ account: name }).toString()}`;
}
