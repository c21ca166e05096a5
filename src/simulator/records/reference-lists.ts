import type { RecordGenerator, SimulationContext } from '../simulation-context.js';

/**
 * Times and version of a reference record: its own when the dataset serves
 * its list, else those of a record never changed (a tracking link may name a
 * board of a dataset that does not serve job_boards).
 */
function timesOf(sim: SimulationContext, resource: string, index: number) {
  return index < sim.size(resource)
    ? sim.times(resource, index)
    : { version: 0, created_at: undefined, updated_at: undefined };
}

function revision(version: number): string {
  return version ? ` (rev ${version})` : '';
}

const SOURCE_TYPES = [
  { id: 1, name: 'Prospecting' },
  { id: 2, name: 'Referral' },
  { id: 3, name: 'Third-party boards' },
] as const;

/** A job board as `/v3/job_boards` serves it: `id, company_name, url_token` and more keys. */
export const simulateJobBoard: RecordGenerator = (sim, index) => {
  const t = timesOf(sim, 'job_boards', index);
  return {
    id: sim.idOf('job_boards', index),
    company_name: `Company ${index}${revision(t.version)}`,
    url_token: `company${index}`,
    active: true,
    created_at: t.created_at,
    updated_at: t.updated_at,
  };
};

/** A source as `/v3/sources` serves it: `id, name, type: {id, name}` (its name is the nested public_name). */
export const simulateSource: RecordGenerator = (sim, index) => {
  const t = timesOf(sim, 'sources', index);
  return {
    id: sim.idOf('sources', index),
    name: `Source ${index}${revision(t.version)}`,
    type: SOURCE_TYPES[index % SOURCE_TYPES.length],
    created_at: t.created_at,
    updated_at: t.updated_at,
  };
};

/** A referrer as `/v3/referrers` serves it: `id, name, user_id` (no employee_id). */
export const simulateReferrer: RecordGenerator = (sim, index) => {
  const t = timesOf(sim, 'referrers', index);
  return {
    id: sim.idOf('referrers', index),
    name: `Referrer ${index}${revision(t.version)}`,
    user_id: index % 3 === 0 ? null : 9_100_000_000 + index,
    created_at: t.created_at,
    updated_at: t.updated_at,
  };
};
