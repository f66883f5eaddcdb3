import { CreateLicensing1795375637788 } from './1795375637788-CreateLicensing';
import { AddOutbox1795376756137 } from './1795376756137-AddOutbox';
import { CreateActivations1795376901819 } from './1795376901819-CreateActivations';
import { AddOfflineActivations1795400000000 } from './1795400000000-AddOfflineActivations';
import { AddRevocationLists1795500000000 } from './1795500000000-AddRevocationLists';
import { AddOutboxTraceContext1796000000000 } from './1796000000000-AddOutboxTraceContext';
import { DropLicensesProductIndex1798000000000 } from './1798000000000-DropLicensesProductIndex';
import { AddCredentials1799000000000 } from './1799000000000-AddCredentials';
import { AddStreamCheckpoints1799000000003 } from './1799000000003-AddStreamCheckpoints';
import { AddEntitlementsAndUsage1799100000000 } from './1799100000000-AddEntitlementsAndUsage';
import { AddPolicies1799200000000 } from './1799200000000-AddPolicies';
import { AddPolicyEntitlementsAndUsage1799300000000 } from './1799300000000-AddPolicyEntitlementsAndUsage';
import { AddRelayFiles1799400000000 } from './1799400000000-AddRelayFiles';

/** In order of application; the timestamp in each name is when it was generated. */
export const LICENSE_MIGRATIONS = [
  CreateLicensing1795375637788,
  AddOutbox1795376756137,
  CreateActivations1795376901819,
  AddOfflineActivations1795400000000,
  AddRevocationLists1795500000000,
  AddOutboxTraceContext1796000000000,
  DropLicensesProductIndex1798000000000,
  AddCredentials1799000000000,
  AddStreamCheckpoints1799000000003,
  AddEntitlementsAndUsage1799100000000,
  AddPolicies1799200000000,
  AddPolicyEntitlementsAndUsage1799300000000,
  AddRelayFiles1799400000000,
];
