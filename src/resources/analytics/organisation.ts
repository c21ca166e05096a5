import { z } from 'zod';
import { defineListResource } from '../json-resource.js';
import { bigintId, opt, timestamp } from '../validate-record.js';
import { UPDATED_AT_GTE } from './applications.js';

// The organisation's dimensions: users (recruiters, who rejected), departments, offices.

/**
 * A user of `/v3/users`, service accounts included. `primary_email`,
 * `emails` and `employee_id` identify a person and no view needs them:
 * unchecked, so that a field policy may drop them, and never a typed column.
 */
export const userSchema = z.looseObject({
  id: bigintId,
  first_name: opt(z.string()),
  last_name: opt(z.string()),
  name: opt(z.string()),
  deactivated: opt(z.boolean()),
  site_admin: opt(z.boolean()),
  created_at: opt(timestamp),
  updated_at: opt(timestamp),
});

export const users = defineListResource('users', {
  description:
    'users, service accounts included (show_service_accounts=true), deactivated ones too',
  schema: userSchema,
  read: {
    incremental: UPDATED_AT_GTE,
    // Without it integration users are hidden, and the ids rows carry (rejected_by_id) do not resolve.
    constants: { show_service_accounts: 'true' },
  },
  columns: {
    first_name: 'text',
    last_name: 'text',
    name: 'text',
    deactivated: 'boolean',
    site_admin: 'boolean',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
  },
});

/** A department or office: its name and its parent in the tree. */
const unitSchema = z.looseObject({
  id: bigintId,
  name: opt(z.string()),
  parent_id: opt(bigintId),
  external_id: opt(z.string()),
  created_at: opt(timestamp),
  updated_at: opt(timestamp),
});

const unitColumns = {
  name: 'text',
  parent_id: 'bigint',
  external_id: 'text',
  created_at: 'timestamptz',
  updated_at: 'timestamptz',
} as const;

export const departments = defineListResource('departments', {
  description: 'departments (name, parent), the dimension of offer acceptance by department',
  schema: unitSchema,
  read: { incremental: UPDATED_AT_GTE },
  columns: unitColumns,
});

export const offices = defineListResource('offices', {
  description: 'offices (name, parent)',
  schema: unitSchema,
  read: { incremental: UPDATED_AT_GTE },
  columns: unitColumns,
});
