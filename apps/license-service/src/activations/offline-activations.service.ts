import { KeyObject, createPublicKey } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { DataSource } from 'typeorm';
import {
  CreateActivationDto,
  MessageView,
  OfflineActivationMessage,
  OfflineActivationReply,
  OfflineReleaseDto,
} from '@licensing/contracts';
import { DecodedJws, decodeJws, signJws, verifyJwsSignature } from '@licensing/license-format';
import { DomainError } from '@licensing/shared/errors';
import { CredentialReach } from '@licensing/shared/logging';
import { Metrics } from '@licensing/shared/metrics';
import { CredentialsService } from '../credentials/credentials.service';
import { SigningKeysService } from '../signing/signing-keys.service';
import { ActivationEntity } from './activation.entity';
import { ACTIVATION_TYP, activationFileClaims } from './activation-file';
import { toActivationView } from './activation.mapper';
import { ActivationsService } from './activations.service';

/** What each file of the air-gapped exchange says it is, so that none is ever taken for another. */
const REQUEST_TYP = 'activation-request+jwt';
const RELEASE_TYP = 'activation-release+jwt';

/** The machine's public key as its request carries it: an Ed25519 JWK. */
interface MachineJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
}

const ED25519_X = /^[A-Za-z0-9_-]{43}$/;
const NONCE = /^[A-Za-z0-9_-]{16,128}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Activation of machines that never reach the service. The machine's SDK writes a request file
 * signed with a key pair it generated (so the request proves it holds the key); an operator
 * carries it here; the answer is an activation file signed with the product's key, which the SDK
 * verifies offline with the public key it ships with. The seat is taken by the same code, under
 * the same lock, as an online activation. Freeing it takes a release file signed with the same
 * machine key: only the machine (or whoever holds its key) can give its seat back. An admin key can
 * still DELETE the activation; no other credential can. The file lives as long as the
 * organization's checkout TTL (30 days by default), never the license's whole validity, and the
 * machine renews it with a new request.
 */
@Injectable()
export class OfflineActivationsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly activations: ActivationsService,
    private readonly signingKeys: SigningKeysService,
    private readonly credentials: CredentialsService,
  ) {}

  async create(
    orgId: string,
    message: OfflineActivationMessage,
    reach: CredentialReach,
  ): Promise<OfflineActivationReply> {
    const { claims, jwk } = await readRequest(message.request);
    // `valid_days` may shorten the file, never lengthen it past the organization's checkout TTL.
    const ttlSeconds = Math.min(message.ttl_seconds, (message.valid_days ?? Infinity) * 86_400);
    const { reply, endedToken } = await this.dataSource.transaction(async (manager) => {
      const now = new Date();
      const seat: CreateActivationDto = {
        license_key: claims.license_key,
        fingerprint: claims.fingerprint,
        hostname: claims.hostname,
        platform: claims.platform,
        components: claims.components,
      };
      const { activation, created, license, product, endedToken } = await this.activations.takeSeat(
        manager,
        orgId,
        { dto: seat, reach, offline: { machineKey: jwk.x, ttlSeconds } },
        now,
      );
      const keyPairId = product.keyPairId ?? license.keyPairId;
      // Inside the transaction, as license files are signed: no second pooled connection.
      const privateKey = keyPairId && (await this.signingKeys.privateKey(orgId, keyPairId, manager));
      if (!keyPairId || !privateKey) {
        throw new DomainError('key_pair_missing', `Product ${product.id} has no usable key pair`);
      }
      const expiresAt = activation.expiresAt!;
      const activationFile = signJws(
        activationFileClaims({
          activationId: activation.id,
          serial: license.serial,
          orgId,
          licenseId: license.id,
          productId: product.id,
          productCode: product.code,
          features: license.features,
          fingerprint: activation.fingerprint,
          components: activation.components,
          nonce: claims.nonce,
          machineKey: jwk,
          issuedAt: now,
          expiresAt,
        }),
        { kid: keyPairId, privateKey },
        ACTIVATION_TYP,
      );
      const answer: OfflineActivationReply = {
        activation: toActivationView(activation),
        activation_file: activationFile,
        expires_at: expiresAt.toISOString(),
        created,
      };
      return { reply: answer, endedToken };
    });
    this.credentials.tokenRevoked(endedToken);
    if (reply.created) {
      this.activations.wakeRelay();
      Metrics.activationsCreated.inc();
    }
    return reply;
  }

  /**
   * Frees the seat of a release signed by the activation's machine key. Releasing twice is a no-op,
   * and so is the release of an activation the credential does not reach.
   */
  release(orgId: string, dto: OfflineReleaseDto, reach: CredentialReach): Promise<MessageView> {
    const decoded = decodeFile(dto.release, 'release', RELEASE_TYP);
    const activationId = decoded.payload['activation_id'];
    if (typeof activationId !== 'string' || !UUID.test(activationId)) {
      throw DomainError.validation([{ field: 'release', message: 'activation_id must be a UUID' }]);
    }
    return this.dataSource.transaction(async (manager) => {
      const activation = await manager.findOne(ActivationEntity, {
        where:
          reach.kind === 'organization'
            ? { id: activationId, orgId }
            : { id: activationId, orgId, licenseId: reach.license_id },
        lock: { mode: 'pessimistic_write' },
      });
      if (!activation) return { message: `Activation ${activationId} holds no seat: nothing to release` };
      if (activation.machineKey === null) {
        throw DomainError.conflict(
          `Activation ${activationId} is online: release it with DELETE /activations/:id`,
        );
      }
      if (
        !verifyJwsSignature(decoded, machineKeyOf({ kty: 'OKP', crv: 'Ed25519', x: activation.machineKey }))
      ) {
        throw DomainError.validation([
          { field: 'release', message: "the release is not signed by the activation's machine key" },
        ]);
      }
      return this.activations.remove(manager, activation);
    });
  }
}

interface RequestClaims {
  license_key: string;
  fingerprint: string;
  hostname?: string;
  platform?: string;
  components?: Record<string, string>;
  nonce: string;
}

/**
 * The claims of an activation request, checked: its shape (the seat fields by the online
 * activation's own validation rules), and its signature by the machine key it carries.
 */
async function readRequest(request: string): Promise<{ claims: RequestClaims; jwk: MachineJwk }> {
  const decoded = decodeFile(request, 'request', REQUEST_TYP);
  const { payload } = decoded;
  const jwk = payload['jwk'] as Partial<MachineJwk> | undefined;
  const problems: string[] = [];
  if (payload['v'] !== 1) problems.push('v must be 1');
  if (typeof payload['nonce'] !== 'string' || !NONCE.test(payload['nonce'])) {
    problems.push('nonce must be 16 to 128 base64url characters');
  }
  if (jwk?.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string' || !ED25519_X.test(jwk.x)) {
    problems.push('jwk must be an Ed25519 public key (kty OKP, crv Ed25519, x)');
  }
  const seat = plainToInstance(CreateActivationDto, {
    license_key: payload['license_key'],
    fingerprint: payload['fingerprint'],
    hostname: payload['hostname'],
    platform: payload['platform'],
    components: payload['components'],
  });
  if (typeof payload['license_key'] !== 'string') problems.push('license_key must be a serial');
  for (const error of await validate(seat)) problems.push(...Object.values(error.constraints ?? {}));
  if (problems.length > 0) {
    throw DomainError.validation(
      problems.map((message) => ({ field: 'request', message })),
      'The activation request is invalid',
    );
  }
  const machineJwk = { kty: 'OKP', crv: 'Ed25519', x: jwk!.x! } as const;
  if (!verifyJwsSignature(decoded, machineKeyOf(machineJwk))) {
    throw DomainError.validation([
      { field: 'request', message: 'the request is not signed by the key it carries' },
    ]);
  }
  return { claims: { ...(seat as RequestClaims), nonce: payload['nonce'] as string }, jwk: machineJwk };
}

function decodeFile(token: string, field: string, typ: string): DecodedJws<Record<string, unknown>> {
  let decoded: DecodedJws<Record<string, unknown>>;
  try {
    decoded = decodeJws<Record<string, unknown>>(token.trim());
  } catch (error) {
    throw DomainError.validation([{ field, message: `not a compact JWS: ${(error as Error).message}` }]);
  }
  if (decoded.header.typ !== typ) {
    throw DomainError.validation([{ field, message: `the file's typ is not ${typ}` }]);
  }
  return decoded;
}

const machineKeyOf = (jwk: MachineJwk): KeyObject => createPublicKey({ key: { ...jwk }, format: 'jwk' });
