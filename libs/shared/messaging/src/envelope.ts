import { CredentialReach, RequestActor, RequestContext } from '@licensing/shared/logging';

/** Every request on the bus: the caller's context beside the payload, which keeps its own shape. */
export interface BusContext {
  request_id: string;
  /** Absent only for calls that are not made on behalf of an organization. */
  org_id?: string;
  /** The API key the request was made with, and the client's address: what audit entries record. */
  actor?: RequestActor;
  ip?: string;
  /** What the caller's credential reaches (absent: the whole organization, as an operator). */
  reach?: CredentialReach;
}

export interface BusEnvelope<T = unknown> {
  ctx: BusContext;
  data: T;
}

/** The request context a service runs a bus request in: the caller's, and the subject it came on. */
export function contextOfEnvelope(
  envelope: Partial<BusEnvelope> | undefined,
  subject: string,
): RequestContext {
  const ctx = envelope?.ctx;
  return {
    request_id: ctx?.request_id ?? 'none',
    org_id: ctx?.org_id,
    subject,
    actor: ctx?.actor,
    ip: ctx?.ip,
    reach: ctx?.reach,
  };
}
