import { AsyncLocalStorage } from 'node:async_hooks';

/** What a log line and a bus message need to know about the request that caused them. */
export interface RequestContext {
  request_id: string;
  org_id?: string;
  subject?: string;
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
