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
  UnsupportedKeyError,
} from './keys';
export type { GeneratedKeyPair, KeyAlgorithm } from './keys';
export { buildCheckoutClaims, buildClaims, LICENSE_TYPES, readLicenseClaims, timeProblems } from './claims';
export type {
  BuildClaimsInput,
  CheckoutExtraClaims,
  CheckoutInput,
  HardwareBinding,
  LicenseClaims,
  LicenseType,
  RelayClaim,
} from './claims';
export { decodeJws, MalformedJwsError, signJws, verifyJwsSignature } from './jws';
export type { DecodedJws } from './jws';
export { generateSerial } from './serial';
export { blobFromJws, jwsFromBlob } from './blob';
