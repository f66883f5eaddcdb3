import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { ApiKeyView, CreatedApiKeyView } from './api-key.dto';
import { ApiKeyEntity } from './api-key.entity';
import { ApiKeyScope } from '../http/auth-context';

/** `lk_` followed by 43 base64url characters: 256 random bits. */
export const API_KEY_PATTERN = /^lk_[A-Za-z0-9_-]{43}$/;

/** The SHA-256 stored and cached for a bearer credential: an API key, or a license or machine token. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function toApiKeyView(key: ApiKeyEntity): ApiKeyView {
  return {
    id: key.id,
    name: key.name,
    scopes: key.scopes,
    prefix: key.prefix,
    created_at: key.createdAt.toISOString(),
  };
}

/** Stores a new key's hash and answers the key itself, which is never stored and never shown again. */
export async function issueApiKey(
  manager: EntityManager,
  orgId: string,
  name: string,
  scopes: ApiKeyScope[],
): Promise<CreatedApiKeyView> {
  const key = `lk_${randomBytes(32).toString('base64url')}`;
  const entity = Object.assign(new ApiKeyEntity(), {
    id: randomUUID(),
    orgId,
    name,
    scopes,
    keyHash: hashApiKey(key),
    prefix: key.slice(0, 10),
    createdAt: new Date(),
    revokedAt: null,
  });
  await manager.insert(ApiKeyEntity, entity);
  return { ...toApiKeyView(entity), key };
}
