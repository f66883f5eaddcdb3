import { readFile } from 'node:fs/promises';
import type { PublicKeyInput } from '@licensing/license-verifier';
import { CliError, type CliIo } from './cli-io';

/** The options of every command that calls the API (see apiCommand). */
export interface ApiOptions {
  url?: string;
  apiKey?: string;
  json?: boolean;
}

const DEFAULT_URL = 'http://localhost:3000';

/**
 * Sends one request to the licensing API and resolves to its JSON body. The options win over the
 * environment, so one command can aim elsewhere without changing the shell.
 */
export async function callApi(
  io: CliIo,
  options: ApiOptions,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  return (await requestApi(io, options, method, path, body, headers)).body;
}

/** callApi, with the answer's headers (`idempotent-replayed`, say). */
export async function requestApi(
  io: CliIo,
  options: ApiOptions,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ body: Record<string, unknown>; headers: Headers }> {
  const url = (options.url ?? io.env['LICENSING_URL'] ?? DEFAULT_URL).replace(/\/+$/, '');
  const apiKey = options.apiKey ?? io.env['LICENSING_API_KEY'];
  if (!apiKey) throw new CliError('an API key is needed: --api-key or LICENSING_API_KEY', 2);
  let response: Response;
  try {
    response = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new CliError(`cannot reach ${url}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const text = await response.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    // A proxy's HTML error page, say: reported by status below.
  }
  if (!response.ok) {
    const detail = String(parsed['detail'] ?? parsed['title'] ?? `HTTP ${response.status}`);
    const errors = Array.isArray(parsed['errors'])
      ? (parsed['errors'] as { field: string; message: string }[])
      : [];
    throw new CliError(
      errors.length > 0 ? `${detail}: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}` : detail,
    );
  }
  return { body: parsed, headers: response.headers };
}

/**
 * A product's public key, from a file or a URL. It is no API call: any URL will do, and the API
 * key is sent only if there is one.
 */
export async function publicKeyFrom(source: string, apiKey: string | undefined): Promise<PublicKeyInput> {
  let text: string;
  if (/^https?:\/\//.test(source)) {
    const response = await fetch(source, {
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      signal: AbortSignal.timeout(30_000),
    }).catch((error: unknown) => {
      throw new CliError(`cannot fetch ${source}: ${error instanceof Error ? error.message : String(error)}`);
    });
    text = await response.text();
    if (!response.ok) throw new CliError(`${source} answered ${response.status}`);
  } else {
    text = await readFile(source, 'utf8').catch(() => {
      throw new CliError(`cannot read ${source}`);
    });
  }
  if (text.trim().startsWith('{')) {
    const json = JSON.parse(text) as Record<string, unknown>;
    // GET /v1/products/:id/public-key answers the PEM inside JSON.
    return typeof json['public_key'] === 'string' ? json['public_key'] : (json as unknown as PublicKeyInput);
  }
  return text;
}
