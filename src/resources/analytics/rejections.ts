import { z } from 'zod';
import { defineListResource } from '../json-resource.js';
import { bigintId, opt, timestamp } from '../validate-record.js';
import { UPDATED_AT_GTE } from './applications.js';

// Why applications were rejected: one detail per rejected application, and the reasons.

/**
 * A row of `/v3/rejection_details`. `question_custom_fields` may be free
 * text: unchecked, so that a field policy may drop it, and never a typed column.
 */
export const rejectionDetailSchema = z.looseObject({
  id: bigintId,
  application_id: opt(bigintId),
  rejection_reason_id: opt(bigintId),
  rejected_by_id: opt(bigintId),
  rejection_note_id: opt(bigintId),
  rejected_at: opt(timestamp),
  created_at: opt(timestamp),
  updated_at: opt(timestamp),
});

export const rejectionDetails = defineListResource('rejection_details', {
  description:
    'rejections of applications: the reason, who rejected and when (one per rejected application)',
  schema: rejectionDetailSchema,
  read: { incremental: UPDATED_AT_GTE },
  columns: {
    application_id: 'bigint',
    rejection_reason_id: 'bigint',
    rejected_by_id: 'bigint',
    rejection_note_id: 'bigint',
    rejected_at: 'timestamptz',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
  },
});

/** A reason of `/v3/rejection_reasons`: its name and type `{id, key, name}` (key e.g. WE_REJECTED_THEM). */
export const rejectionReasonSchema = z.looseObject({
  id: bigintId,
  name: opt(z.string()),
  type: opt(z.looseObject({ id: opt(bigintId), key: opt(z.string()), name: opt(z.string()) })),
  created_at: opt(timestamp),
  updated_at: opt(timestamp),
});

export const rejectionReasons = defineListResource('rejection_reasons', {
  description: 'rejection reasons, the built-in ones included (include_defaults=true)',
  schema: rejectionReasonSchema,
  read: {
    incremental: UPDATED_AT_GTE,
    // Without it the list hides the built-in reasons that rejection details point to.
    constants: { include_defaults: 'true' },
  },
  columns: { name: 'text', type: 'jsonb', created_at: 'timestamptz', updated_at: 'timestamptz' },
});
