/**
 * The malformed records a dataset serves with `malformedEvery`: they rotate
 * through the kinds a validator must catch.
 */
export function malformedRecord(id: number, index: number, malformedEvery: number): unknown {
  switch (Math.floor(index / Math.max(1, malformedEvery)) % 4) {
    case 0:
      return { id: String(id), token: 'string-id' };
    case 1:
      return {
        id,
        job_id: 'abc',
        token: 'bad-job-id',
        created_at: '2024-01-01T00:00:00Z',
        updated_at: '2024-01-01T00:00:00Z',
      };
    case 2:
      return `not an object ${id}`;
    default:
      return { token: 'no-id' };
  }
}
