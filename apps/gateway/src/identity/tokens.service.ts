import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import {
  Broadcasts,
  LICENSE_TOKEN_PATTERN,
  MACHINE_TOKEN_PATTERN,
  Messages,
  ResolvedCredential,
} from '@licensing/contracts';
import { BusClient } from '@licensing/shared/messaging';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { hashApiKey } from './api-key-issuer';
import { AuthContext } from '../http/auth-context';

const MAX_CACHED_TOKENS = 100_000;

/**
 * License tokens (`lt_…`) and machine tokens (`mt_…`), which the license service owns. A token is
 * resolved over the bus once, then served from memory for API_KEY_CACHE_TTL_MS (never past its own
 * expiry), so the hot paths pay no extra bus hop. Revoking a token, or deleting a machine token's
 * activation, evicts it from every gateway at once.
 */
@Injectable()
export class TokensService implements OnApplicationBootstrap {
  private readonly cache = new Map<string, { auth: AuthContext | null; expiresAt: number }>();

  constructor(
    private readonly bus: BusClient,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.bus.subscribe(Broadcasts.tokenRevoked, ({ token_hash }) => this.cache.delete(token_hash));
  }

  /** Whether `credential` has the shape of a token (and not of an API key). */
  static isToken(credential: string): boolean {
    return LICENSE_TOKEN_PATTERN.test(credential) || MACHINE_TOKEN_PATTERN.test(credential);
  }

  async authenticate(token: string): Promise<AuthContext | undefined> {
    const kind = LICENSE_TOKEN_PATTERN.test(token)
      ? 'license'
      : MACHINE_TOKEN_PATTERN.test(token)
        ? 'machine'
        : undefined;
    if (!kind) return undefined;
    const hash = hashApiKey(token);
    const now = Date.now();
    const cached = this.cache.get(hash);
    if (cached && cached.expiresAt > now) return cached.auth ?? undefined;
    const { credential } = await this.bus.send(Messages.credential.resolve, { kind, token_hash: hash });
    const auth = credential ? toAuthContext(credential) : null;
    const ttl = this.config.API_KEY_CACHE_TTL_MS;
    if (ttl > 0) {
      const expires = credential?.expires_at ? Date.parse(credential.expires_at) : Infinity;
      if (this.cache.size >= MAX_CACHED_TOKENS) this.cache.clear();
      this.cache.set(hash, { auth, expiresAt: Math.min(now + ttl, expires) });
    }
    return auth ?? undefined;
  }
}

function toAuthContext(credential: ResolvedCredential): AuthContext {
  const license = { id: credential.license_id, serial: credential.serial, productId: credential.product_id };
  return {
    orgId: credential.org_id,
    keyId: credential.id,
    prefix: credential.prefix,
    name: credential.name,
    scopes: [credential.kind],
    reach:
      credential.kind === 'license'
        ? { kind: 'license', license_id: credential.license_id }
        : {
            kind: 'machine',
            license_id: credential.license_id,
            activation_id: credential.activation_id!,
            fingerprint: credential.fingerprint!,
          },
    license,
  };
}
