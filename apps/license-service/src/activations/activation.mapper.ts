import { ActivationView } from '@licensing/contracts';
import { ActivationEntity } from './activation.entity';

export function toActivationView(activation: ActivationEntity): ActivationView {
  return {
    id: activation.id,
    license_id: activation.licenseId,
    fingerprint: activation.fingerprint,
    hostname: activation.hostname,
    platform: activation.platform,
    components: activation.components,
    created_at: activation.createdAt.toISOString(),
    last_heartbeat_at: activation.lastHeartbeatAt.toISOString(),
    expires_at: activation.expiresAt?.toISOString() ?? null,
  };
}

/** Past its heartbeat deadline an activation holds no seat, even before the sweeper removes it. */
export function isLapsed(activation: Pick<ActivationEntity, 'expiresAt'>, now: Date): boolean {
  return activation.expiresAt !== null && activation.expiresAt.getTime() <= now.getTime();
}

/**
 * Whether a machine (or a process) still holds its place: until its deadline, and for `graceSeconds`
 * after it, during which a heartbeat revives it. Validate says HEARTBEAT_DEAD in the grace already.
 */
export function holdsPlace(row: { expiresAt: Date | null }, graceSeconds: number, now: Date): boolean {
  return row.expiresAt === null || row.expiresAt.getTime() + graceSeconds * 1000 > now.getTime();
}

export function heartbeatDeadline(intervalSeconds: number | null, now: Date): Date | null {
  return intervalSeconds === null ? null : new Date(now.getTime() + intervalSeconds * 1000);
}

/**
 * An offline activation lasts `seconds`, and never past the end of its license; in whole seconds,
 * as its file's `exp` says it.
 */
export function offlineDeadline(seconds: number, licenseValidUntil: Date | null, now: Date): Date {
  const deadline = Math.min(now.getTime() + seconds * 1000, licenseValidUntil?.getTime() ?? Infinity);
  return new Date(Math.floor(deadline / 1000) * 1000);
}
