import { RequestActor } from '@licensing/shared/logging';

/** Every request on the bus: the caller's context beside the payload, which keeps its own shape. */
export interface BusContext {
  request_id: string;
  /** Absent only for calls that are not made on behalf of an organization. */
  org_id?: string;
  /** The API key the request was made with, and the client's address: what audit entries record. */
  actor?: RequestActor;
  ip?: string;
}

export interface BusEnvelope<T = unknown> {
  ctx: BusContext;
  data: T;
}
