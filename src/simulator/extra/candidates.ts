import {
  dateAfter,
  type ExtraResource,
  externalRef,
  wholeSecondsAfter,
} from '../extra-resource.js';

const FIRST_NAMES = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Radia'];
const LAST_NAMES = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Allen'];
const TITLES = ['Software Engineer', 'Data Analyst', 'Product Designer', 'Recruiter'];
const TAGS = ['python', 'remote', 'referral', 'senior', 'relocation', 'contract'];
const PRONOUNS = ['she/her', 'he/him', 'they/them'];

/** Index of the candidate of application `index`: one or two applications each. */
export function candidateOfApplication(index: number): number {
  return Math.floor((2 * index) / 3);
}

/** Indexes of the applications of candidate `index` (the inverse of {@link candidateOfApplication}). */
export function applicationsOfCandidate(index: number): number[] {
  const out: number[] = [];
  for (let i = Math.ceil((3 * index) / 2); candidateOfApplication(i) === index; i += 1) out.push(i);
  return out;
}

/**
 * Candidates: arrays of objects (`emails`, `phone_numbers`, `addresses`, one
 * sometimes empty), arrays of scalars (`tags`, `application_ids`), a date
 * (`available_on`), timestamps in whole seconds or with microseconds
 * (`last_activity_at`), a key that is always null (`photo_url`), a mixed one
 * (`external_ref`), and `pronouns` only on candidates added after the start.
 */
export const candidates: ExtraResource = {
  name: 'candidates',
  description: 'candidates, with emails, phone numbers and addresses as arrays of objects',
  path: '/v3/candidates',
  idBase: 20_300_000_000,
  keys: {
    id: 'integer',
    first_name: 'text',
    last_name: 'text',
    pronouns: 'text',
    company: 'text',
    title: 'text',
    is_private: 'boolean',
    can_email: 'boolean',
    tags: 'array',
    emails: 'array',
    phone_numbers: 'array',
    addresses: 'array',
    application_ids: 'array',
    external_ref: 'mixed',
    available_on: 'date',
    photo_url: 'null',
    last_activity_at: 'timestamp',
    created_at: 'timestamp',
    updated_at: 'timestamp',
  },
  lateKeys: ['pronouns'],
  simulate: (sim, index) => {
    const h = sim.mix(sim.seed + 20, index);
    const t = sim.times('candidates', index);
    const first = FIRST_NAMES[h % FIRST_NAMES.length] ?? 'Ada';
    const last = LAST_NAMES[(h >>> 4) % LAST_NAMES.length] ?? 'Lovelace';
    const mailbox = `${first}.${last}${index}`.toLowerCase();
    const revision = t.version ? ` (rev ${t.version})` : '';
    const late = index >= sim.startSize('candidates');
    return {
      id: sim.idOf('candidates', index),
      first_name: first,
      last_name: last,
      ...(late ? { pronouns: PRONOUNS[h % PRONOUNS.length] } : {}),
      company: h % 4 === 0 ? null : `Company ${(h >>> 12) % 50}`,
      title: h % 6 === 0 && !revision ? null : `${TITLES[(h >>> 7) % TITLES.length]}${revision}`,
      is_private: h % 9 === 0,
      can_email: h % 5 !== 0,
      tags: TAGS.filter((_, k) => ((h >>> (16 + k)) & 3) === 0),
      emails: [
        { value: `${mailbox}@example.com`, type: 'personal' },
        ...(h % 2 === 0 ? [{ value: `${mailbox}@work.example`, type: 'work' }] : []),
      ],
      phone_numbers:
        h % 3 === 0
          ? []
          : [{ value: `+1 555 01${String(h % 100).padStart(2, '0')}`, type: 'mobile' }],
      addresses:
        h % 4 === 1
          ? []
          : [{ value: `${1 + (h % 200)} Main Street, Springfield`, type: h % 2 ? 'home' : 'work' }],
      application_ids: applicationsOfCandidate(index).map((i) => sim.idOf('applications', i)),
      external_ref: externalRef('cand', index, h),
      available_on: h % 3 === 1 ? null : dateAfter(t.created_at, 14 + (h % 60)),
      photo_url: null,
      // Whole seconds on even indexes, microseconds (as updated_at) on odd ones.
      last_activity_at: index % 2 === 0 ? wholeSecondsAfter(t.updated_at, 0) : t.updated_at,
      created_at: t.created_at,
      updated_at: t.updated_at,
    };
  },
};
