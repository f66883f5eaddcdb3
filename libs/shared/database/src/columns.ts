import { ValueTransformer } from 'typeorm';

/**
 * Timestamps are stored with millisecond precision, the precision the API returns, so that what a
 * client reads back and the order of a list agree exactly.
 */
export const TIMESTAMP = { type: 'timestamptz', precision: 3 } as const;

/** bigint/int8 columns come back from pg as strings; counts fit comfortably in a JS number. */
export const numberTransformer: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | null) => (value === null ? null : Number(value)),
};
