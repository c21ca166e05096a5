import type { ExtraResource } from '../extra-resource.js';

/**
 * Departments, a tree: department i > 0 has parent (i - 1) / 4 (rounded
 * down); an array of integers (`office_ids`), an external id that is text or
 * null.
 */
export const departments: ExtraResource = {
  name: 'departments',
  description: 'departments, a tree by parent_id',
  path: '/v3/departments',
  idBase: 23_300_000_000,
  keys: {
    id: 'integer',
    name: 'text',
    parent_id: 'integer',
    office_ids: 'array',
    external_id: 'text',
    created_at: 'timestamp',
    updated_at: 'timestamp',
  },
  lateKeys: [],
  simulate: (sim, index) => {
    const h = sim.mix(sim.seed + 23, index);
    const t = sim.times('departments', index);
    return {
      id: sim.idOf('departments', index),
      name: `Department ${index}${t.version ? ` (rev ${t.version})` : ''}`,
      parent_id: index === 0 ? null : sim.idOf('departments', Math.floor((index - 1) / 4)),
      office_ids: Array.from({ length: h % 3 }, (_, k) => 4_000 + ((h >>> (4 * k)) % 16)),
      external_id: h % 3 === 0 ? null : `DEP-${index}`,
      created_at: t.created_at,
      updated_at: t.updated_at,
    };
  },
};
