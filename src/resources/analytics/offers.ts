import { z } from 'zod';
import { defineListResource } from '../json-resource.js';
import { bigintId, isoDate, opt, timestamp } from '../validate-record.js';
import { UPDATED_AT_GTE } from './applications.js';

// Offers and the openings hires close: time to hire, time to fill, offer acceptance.

/**
 * An offer of `/v3/offers`, every version (the latest per application is
 * derived in SQL). `custom_fields` holds compensation: unchecked, so that a
 * field policy may drop it, and never a typed column.
 */
export const offerSchema = z.looseObject({
  id: bigintId,
  version: opt(bigintId),
  application_id: opt(bigintId),
  job_id: opt(bigintId),
  candidate_id: opt(bigintId),
  opening_id: opt(bigintId),
  // Created | Accepted | Rejected | Deprecated; any text is kept.
  status: opt(z.string()),
  sent_on: opt(isoDate),
  starts_on: opt(isoDate),
  resolved_at: opt(timestamp),
  created_at: opt(timestamp),
  updated_at: opt(timestamp),
});

export const offers = defineListResource('offers', {
  description: 'offers, every version (status, sent_on, resolved_at), to the opening they fill',
  schema: offerSchema,
  read: { incremental: UPDATED_AT_GTE },
  columns: {
    version: 'bigint',
    application_id: 'bigint',
    job_id: 'bigint',
    candidate_id: 'bigint',
    opening_id: 'bigint',
    status: 'text',
    sent_on: 'date',
    starts_on: 'date',
    resolved_at: 'timestamptz',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
  },
});

/** An opening of `/v3/openings`: one headcount slot of a job, closed with a reason (a hire's names the application). */
export const openingSchema = z.looseObject({
  id: bigintId,
  job_id: opt(bigintId),
  // The HRIS's own id, as text; not unique.
  opening_id: opt(z.string()),
  open: opt(z.boolean()),
  opened_at: opt(timestamp),
  closed_at: opt(timestamp),
  application_id: opt(bigintId),
  close_reason_id: opt(bigintId),
  target_start_on: opt(isoDate),
  sort_order: opt(bigintId),
  created_at: opt(timestamp),
  updated_at: opt(timestamp),
});

export const openings = defineListResource('openings', {
  description:
    "jobs' openings: opened and closed times, the close reason and the application that filled it",
  schema: openingSchema,
  read: { incremental: UPDATED_AT_GTE },
  columns: {
    job_id: 'bigint',
    opening_id: 'text',
    open: 'boolean',
    opened_at: 'timestamptz',
    closed_at: 'timestamptz',
    application_id: 'bigint',
    close_reason_id: 'bigint',
    target_start_on: 'date',
    sort_order: 'bigint',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
  },
});

/** A reason of `/v3/close_reasons`; a name starting with `Hire -` is a hire. */
export const closeReasonSchema = z.looseObject({
  id: bigintId,
  name: opt(z.string()),
  created_at: opt(timestamp),
  updated_at: opt(timestamp),
});

export const closeReasons = defineListResource('close_reasons', {
  description: "openings' close reasons (a name starting with 'Hire -' is a hire)",
  schema: closeReasonSchema,
  read: { incremental: UPDATED_AT_GTE },
  columns: { name: 'text', created_at: 'timestamptz', updated_at: 'timestamptz' },
});
