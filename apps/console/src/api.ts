import { problemFields, problemMessage } from './data';

/** The API, on the origin that served the console (the CSP allows no other: `connect-src 'self'`). */
const API = '/api/v1';
/**
 * The key lives in this tab's sessionStorage: it survives a reload, never another tab or a restart
 * of the browser, and, unlike localStorage, is gone when the tab closes.
 */
const STORAGE_KEY = 'licensing-console.api-key';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The problem's `errors`, by field (`features.1` also under `features`): shown at the field. */
    readonly fields: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function storedKey(): string | null {
  return sessionStorage.getItem(STORAGE_KEY);
}

export function storeKey(key: string | null): void {
  if (key === null) sessionStorage.removeItem(STORAGE_KEY);
  else sessionStorage.setItem(STORAGE_KEY, key);
}

/** Called when the API refuses the key (revoked meanwhile): the app goes back to sign-in. */
let onUnauthorized: (message: string) => void = () => undefined;
export const whenUnauthorized = (handler: (message: string) => void): void => {
  onUnauthorized = handler;
};

async function send(method: string, path: string, body?: unknown, key = storedKey()): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(`${API}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, 'The API could not be reached. Is the gateway running?');
  }
  if (response.ok) return response;
  const problem: unknown = await response.json().catch(() => undefined);
  const error = new ApiError(
    response.status,
    problemMessage(response.status, problem),
    problemFields(problem),
  );
  if (response.status === 401 && key === storedKey()) onUnauthorized(error.message);
  throw error;
}

export const api = {
  get: async <T>(path: string): Promise<T> => (await (await send('GET', path)).json()) as T,
  post: async <T>(path: string, body?: unknown): Promise<T> =>
    (await (await send('POST', path, body)).json()) as T,
  put: async <T>(path: string, body: unknown): Promise<T> =>
    (await (await send('PUT', path, body)).json()) as T,
  patch: async <T>(path: string, body: unknown): Promise<T> =>
    (await (await send('PATCH', path, body)).json()) as T,
  delete: async <T>(path: string, body?: unknown): Promise<T> =>
    (await (await send('DELETE', path, body)).json()) as T,
  blob: async (path: string): Promise<Blob> => (await send('GET', path)).blob(),
  /** Asks with a key that is not (yet) the stored one: sign-in. */
  withKey: async <T>(key: string, path: string): Promise<T> =>
    (await (await send('GET', path, undefined, key)).json()) as T,
};

/** Saves a blob as a file, through a link the user could have clicked (no navigation, no new tab). */
export function saveFile(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
