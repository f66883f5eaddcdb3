// Taking license files apart, for tests that inspect or tamper with them.

/** The `code`s of a verify response's errors, in order. */
export const errorCodes = (body: { errors?: { code: string }[] }): string[] =>
  (body.errors ?? []).map((e) => e.code);

/** The compact JWS inside a license_blob. */
export const jwsOf = (blob: string): string => Buffer.from(blob, 'base64').toString('utf8');

/** Base64 of a compact JWS, as the API carries it. */
export const blobOf = (jws: string): string => Buffer.from(jws, 'utf8').toString('base64');

/** The decoded header and payload of a license_blob (nothing is verified). */
export function decodeBlob(blob: string): {
  header: Record<string, any>;
  claims: Record<string, any>;
  segments: string[];
} {
  const segments = jwsOf(blob).split('.');
  const json = (segment: string) => JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  return { header: json(segments[0]!), claims: json(segments[1]!), segments };
}

/** base64url of a JSON value: a JWS header or payload segment. */
export const segmentOf = (value: unknown): string =>
  Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
