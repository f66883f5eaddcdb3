// The license file format (docs/api.md): serials, signing keys and fingerprints, the claims,
// compact-JWS signing and algorithm-pinned verification, and the base64 license_blob wrapper.
// Framework-free and node:crypto only, so every service signs and checks licenses one way.
export {
  generateKeyPair,
  InvalidKeyError,
  jwsAlgorithmFor,
  KEY_ALGORITHMS,
  keyAlgorithmOf,
  parsePrivateKey,
  parsePublicKey,
  publicKeyFingerprint,
  UnsupportedKeyError,
} from './keys';
export type { GeneratedKeyPair, JwsAlgorithm, KeyAlgorithm } from './keys';
export {
  buildCheckoutClaims,
  buildClaims,
  fileExpiryOf,
  LICENSE_TYPES,
  readLicenseClaims,
  timeProblems,
} from './claims';
export type {
  BuildClaimsInput,
  CheckoutExtraClaims,
  CheckoutInput,
  HardwareBinding,
  LicenseClaims,
  LicenseType,
  PolicyLimits,
  TimedClaims,
  TimeProblem,
} from './claims';
export { decodeJws, MalformedJwsError, signJws, verifyJwsSignature } from './jws';
export type { DecodedJws, JwsHeader } from './jws';
export { generateSerial, isSerial, SERIAL_PATTERN, SERIAL_SUFFIX_LENGTH } from './serial';
export { blobFromJws, jwsFromBlob } from './blob';
