// The shared factories and helpers, under the name the end-to-end suites have always imported.
export {
  apiKeyWithScopes,
  blobOf,
  createLicense,
  decodeBlob,
  errorCodes,
  expireLicenseInDatabase,
  jwsOf,
  productWithKeyPair,
  segmentOf,
  sql,
  uniqueCode,
} from '@licensing/shared/testing';
