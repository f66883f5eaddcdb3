// The offline license verifier and the online license client that customers embed in their
// applications: WebCrypto and fetch only, no dependencies, the same code in Node, browsers,
// Deno, Bun, Electron and edge runtimes.
export { decodeLicense, licenseBlobOf, verifyLicense } from './verify-license';
export type {
  LicenseInput,
  VerifiedLicense,
  VerifyError,
  VerifyErrorCode,
  VerifyOptions,
  VerifyResult,
} from './verify-license';
export { importPublicKey, InvalidPublicKeyError } from './public-key';
export type { KeyType, LicensePublicKey, PublicJwk, PublicJwkSet, PublicKeyInput } from './public-key';
export { LICENSE_TYPES } from './claims';
export type { LicenseClaims, LicenseType, PolicyLimits } from './claims';
export { isRevoked, isStale, revocationEntry, verifyRevocationList } from './revocation-list';
export type {
  RevocationEntry,
  RevocationList,
  RevocationListError,
  RevocationListErrorCode,
  RevocationListOptions,
  RevocationListResult,
} from './revocation-list';
export { verifySignedAnswer } from './signed-answer';
export type {
  SignedAnswer,
  SignedAnswerError,
  SignedAnswerErrorCode,
  SignedAnswerOptions,
  SignedAnswerResult,
} from './signed-answer';
export { LicenseClient, LicenseClientError, statusRuns } from './license-client';
export type {
  Activation,
  LicenseClientOptions,
  LicenseState,
  LicenseStateStore,
  LicenseStatusCode,
  RevocationResult,
  StoredActivation,
  SyncReport,
} from './license-client';
export { RelayClient } from './relay-client';
export type { RelayClientOptions, RelayLease, RelayStatus } from './relay-client';
export { SseParser, subscribeLicenseEvents } from './license-events';
export type {
  LicenseEvent,
  LicenseEventsOptions,
  LicenseEventSubscription,
  ServerSentEvent,
} from './license-events';
export { createActivationRelease, createActivationRequest, verifyActivationFile } from './offline-activation';
export type {
  ActivationErrorCode,
  ActivationRequest,
  ActivationRequestInput,
  ActivationVerifyOptions,
  ActivationVerifyResult,
  MachineKey,
  VerifiedActivation,
} from './offline-activation';
