import { dateAfter, type ExtraResource, microsAfter } from '../extra-resource.js';
import { candidateOfApplication } from './candidates.js';

const STATUSES = ['unresolved', 'accepted', 'rejected', 'deprecated'] as const;
const EMPLOYMENT = ['Full-time', 'Part-time', 'Contract'];

/**
 * Offers, one per application of the same index: dates (`sent_on`,
 * `starts_on`), a timestamp that is null until resolved (`resolved_at`), and
 * an object of custom fields nesting decimals and booleans.
 */
export const offers: ExtraResource = {
  name: 'offers',
  description: 'offers, one per application, with custom fields nested',
  path: '/v3/offers',
  idBase: 22_300_000_000,
  keys: {
    id: 'integer',
    version: 'integer',
    application_id: 'integer',
    candidate_id: 'integer',
    job_id: 'integer',
    status: 'text',
    sent_on: 'date',
    starts_on: 'date',
    resolved_at: 'timestamp',
    custom_fields: 'object',
    created_at: 'timestamp',
    updated_at: 'timestamp',
  },
  lateKeys: [],
  simulate: (sim, index) => {
    const h = sim.mix(sim.seed + 22, index);
    const t = sim.times('offers', index);
    const status = STATUSES[h % 4] ?? 'unresolved';
    return {
      id: sim.idOf('offers', index),
      version: 1 + ((h >>> 3) % 3) + t.version,
      application_id: sim.idOf('applications', index),
      candidate_id: sim.idOf('candidates', candidateOfApplication(index)),
      job_id: sim.idOf('jobs', h % Math.max(1, sim.size('jobs'))),
      status,
      sent_on: status === 'unresolved' && h % 3 === 0 ? null : dateAfter(t.created_at, 1),
      starts_on: dateAfter(t.created_at, 30 + (h % 60)),
      resolved_at:
        status === 'accepted' || status === 'rejected'
          ? microsAfter(t.updated_at, 0, h >>> 1)
          : null,
      custom_fields: {
        employment_type: EMPLOYMENT[(h >>> 5) % 3],
        salary: { amount: 60_000 + ((h >>> 7) % 90) * 1_000 + 0.5, currency: 'USD' },
        bonus_percent: h % 4 === 0 ? null : ((h >>> 9) % 20) / 2,
        remote: h % 2 === 0,
      },
      created_at: t.created_at,
      updated_at: t.updated_at,
    };
  },
};
