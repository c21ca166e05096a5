import {
  dateAfter,
  type ExtraResource,
  externalRef,
  microsAfter,
  wholeSecondsAfter,
} from '../extra-resource.js';
import { candidateOfApplication } from './candidates.js';

const STATUSES = ['active', 'rejected', 'hired'] as const;
const STAGES = ['Application Review', 'Phone Screen', 'Onsite', 'Offer'];
const SOURCE_TYPES = ['Prospecting', 'Referral', 'Job board'];
const REJECTIONS = ['Not a fit', 'Withdrew', 'Hired elsewhere'];
const CITIES = ['Berlin', 'Lisbon', 'Toronto', 'Remote'];

/**
 * Applications: nested objects (`source` with a nested `type`,
 * `current_stage`, `rejection_reason`), an array of objects (`jobs`), a
 * decimal (`score`: quarters from 1 to 5, e.g. 3.75, some whole), an integer
 * (`attachment_count`), a boolean (`prospect`), timestamps in whole seconds
 * (`applied_at`) and with microseconds (`rejected_at`, `last_activity_at`), a
 * date (`expected_start_on`), a mixed key (`external_ref`), and `location`
 * only on applications added after the start.
 */
export const applications: ExtraResource = {
  name: 'applications',
  description: "applications, each a candidate's for jobs, with nested source and stage",
  path: '/v3/applications',
  idBase: 21_300_000_000,
  keys: {
    id: 'integer',
    candidate_id: 'integer',
    prospect: 'boolean',
    status: 'text',
    applied_at: 'timestamp',
    rejected_at: 'timestamp',
    last_activity_at: 'timestamp',
    source: 'object',
    current_stage: 'object',
    rejection_reason: 'object',
    jobs: 'array',
    location: 'object',
    score: 'decimal',
    attachment_count: 'integer',
    external_ref: 'mixed',
    expected_start_on: 'date',
    created_at: 'timestamp',
    updated_at: 'timestamp',
  },
  lateKeys: ['location'],
  simulate: (sim, index) => {
    const h = sim.mix(sim.seed + 21, index);
    const t = sim.times('applications', index);
    const prospect = h % 6 === 0;
    const status = prospect ? 'active' : (STATUSES[(h >>> 2) % 3] ?? 'active');
    const source = (h >>> 5) % 12;
    const jobs = Math.max(1, sim.size('jobs'));
    const late = index >= sim.startSize('applications');
    return {
      id: sim.idOf('applications', index),
      candidate_id: sim.idOf('candidates', candidateOfApplication(index)),
      prospect,
      status,
      applied_at: wholeSecondsAfter(t.created_at, -(h % 86_400)),
      // Rejected in the second of the last update: never after it, never in the future.
      rejected_at: status === 'rejected' ? microsAfter(t.updated_at, 0, h >>> 1) : null,
      last_activity_at: t.updated_at,
      source:
        h % 8 === 0
          ? null
          : {
              id: 100 + source,
              public_name: `Source ${source}`,
              type: { id: source % 3, name: SOURCE_TYPES[source % 3] },
            },
      current_stage:
        status === 'active'
          ? { id: 7_000 + ((h >>> 9) % 4), name: STAGES[(h >>> 9) % 4] ?? 'Application Review' }
          : null,
      rejection_reason:
        status === 'rejected'
          ? {
              id: 900 + ((h >>> 11) % 3),
              name: REJECTIONS[(h >>> 11) % 3],
              type: { id: 1, name: 'We rejected them' },
            }
          : null,
      jobs:
        prospect && h % 12 === 0
          ? []
          : [{ id: sim.idOf('jobs', h % jobs), name: `Job ${h % jobs}` }],
      ...(late ? { location: { address: CITIES[h % CITIES.length] } } : {}),
      score: h % 5 === 0 ? null : 1 + ((h >>> 13) % 17) * 0.25,
      attachment_count: (h >>> 17) % 4,
      external_ref: externalRef('app', index, h),
      expected_start_on: status === 'hired' ? dateAfter(t.created_at, 30 + (h % 45)) : null,
      created_at: t.created_at,
      updated_at: t.updated_at,
    };
  },
};
