import { CreateIdentity1795375819351 } from './1795375819351-CreateIdentity';
import { CreateIdempotencyKeys1795430887909 } from './1795430887909-CreateIdempotencyKeys';
import { CreateAuditEvents1795430939744 } from './1795430939744-CreateAuditEvents';
import { AddOrganizationRateLimits1795430945058 } from './1795430945058-AddOrganizationRateLimits';
import { CreateResponseKeys1795500000001 } from './1795500000001-CreateResponseKeys';
import { AddOrganizationSettings1799000000001 } from './1799000000001-AddOrganizationSettings';
import { RotateResponseKeys1799000000002 } from './1799000000002-RotateResponseKeys';

/** In order of application; the timestamp in each name is when it was generated. */
export const GATEWAY_MIGRATIONS = [
  CreateIdentity1795375819351,
  CreateIdempotencyKeys1795430887909,
  CreateAuditEvents1795430939744,
  AddOrganizationRateLimits1795430945058,
  CreateResponseKeys1795500000001,
  AddOrganizationSettings1799000000001,
  RotateResponseKeys1799000000002,
];
