/** Every request on the bus: the caller's context beside the payload, which keeps its own shape. */
export interface BusContext {
  request_id: string;
  /** Absent only for calls that are not made on behalf of an organization. */
  org_id?: string;
}

export interface BusEnvelope<T = unknown> {
  ctx: BusContext;
  data: T;
}
