// Package licensing verifies the documents the licensing platform signs, offline.
//
// It reads license files (and the API's base64 license_blob), checked-out license files,
// revocation lists and their deltas, signed answers of the online API, and activation files of
// air-gapped machines.
// It checks each one with the product's public key (or the organization's response keys for
// signed answers), and answers a verdict: valid, or a list of error codes.
// It also writes the request and release files of an air-gapped machine
// (CreateActivationRequest, CreateActivationRelease).
//
// The key decides the algorithm.
// An Ed25519 key verifies EdDSA, a P-256 key verifies ES256, and an RSA key of 2048 bits or more
// verifies PS256.
// A document naming any other algorithm fails its signature.
//
// The package uses the Go standard library only.
// It behaves like the platform's JavaScript SDK: the conformance vectors in sdks/conformance
// hold both to the same verdicts and the same error codes, in the same order.
package licensing
