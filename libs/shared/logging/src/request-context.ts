import { AsyncLocalStorage } from 'node:async_hooks';

/** The API key a request was made with: who an audit entry says made a change. */
export interface RequestActor {
  api_key_id: string;
  prefix: string;
  name: string;
}

/**
 * What the caller's credential reaches inside its organization. An API key reaches the whole
 * organization (`admin` says whether it may do everything there); a license token reaches one
 * license; a machine token one activation of one license. Services answer anything outside the
 * reach exactly as they answer another organization's resources.
 */
export type CredentialReach =
  | { kind: 'organization'; admin: boolean }
  | { kind: 'license'; license_id: string }
  | { kind: 'machine'; license_id: string; activation_id: string; fingerprint: string };

/** What a log line and a bus message need to know about the request that caused them. */
export interface RequestContext {
  request_id: string;
  org_id?: string;
  subject?: string;
  /** Absent for work no API key asked for (sweeps, operators' commands). */
  actor?: RequestActor;
  /** The client's address as the gateway saw it. */
  ip?: string;
  /** Absent for work no credential asked for (sweeps, operators' commands, service-to-service calls). */
  reach?: CredentialReach;
}

const storage = new AsyncLocalStorage<RequestContext>();

export const requestContext = {
  run<T>(context: RequestContext, fn: () => T): T {
    return storage.run(context, fn);
  },
  current(): RequestContext | undefined {
    return storage.getStore();
  },
};
