import { AsyncLocalStorage } from 'node:async_hooks';

/** The API key a request was made with: who an audit entry says made a change. */
export interface RequestActor {
  api_key_id: string;
  prefix: string;
  name: string;
}

/** What a log line and a bus message need to know about the request that caused them. */
export interface RequestContext {
  request_id: string;
  org_id?: string;
  subject?: string;
  /** Absent for work no API key asked for (sweeps, operators' commands). */
  actor?: RequestActor;
  /** The client's address as the gateway saw it. */
  ip?: string;
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
