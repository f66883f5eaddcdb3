import { EntityManager } from 'typeorm';
import { AuditAction, AuditChanges, LicenseEventType, LicenseView } from '@licensing/contracts';
import { OutboxRow, auditChanges, eventMessage, recordAudit, recordEvent } from '@licensing/shared/events';
import type { LicenseEntity } from './license.entity';
import { toSerialStatus } from './serial-statuses.service';

interface LicenseChange {
  /** The event type, `license.updated` for most changes; an increment has data of its own. */
  type: Exclude<LicenseEventType, 'license.usage_incremented'>;
  action: AuditAction;
  /** The license as answered before the change, and after it. */
  before: LicenseView;
  data: LicenseView;
  now: Date;
  /** The audit entry's changes, when they are not simply `before` against `data`. */
  changes?: AuditChanges;
}

/**
 * Records a change of a license inside its transaction: its event, with the serial status the
 * revocation cache reads, and its audit entry, both through the outbox. Returns the event's outbox
 * row, for a change that publishes it before answering.
 */
export async function recordLicenseChange(
  manager: EntityManager,
  license: LicenseEntity,
  { type, action, before, data, now, changes }: LicenseChange,
): Promise<OutboxRow> {
  const event = await recordEvent(manager, {
    type,
    orgId: license.orgId,
    data,
    occurredAt: now,
    serialStatus: toSerialStatus(license),
  });
  await recordAudit(manager, {
    orgId: license.orgId,
    action,
    resourceType: 'license',
    resourceId: license.id,
    changes: changes ?? auditChanges(before, data),
    occurredAt: now,
  });
  return eventMessage(event);
}
