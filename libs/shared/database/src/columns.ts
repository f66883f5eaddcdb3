/**
 * Timestamps are stored with millisecond precision, the precision the API returns, so that what a
 * client reads back and the order of a list agree exactly.
 */
export const TIMESTAMP = { type: 'timestamptz', precision: 3 } as const;
