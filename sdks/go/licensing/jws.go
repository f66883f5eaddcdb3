package licensing

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"math/big"
	"strings"
)

const (
	es256SignatureSize = 64
	pssSaltLength      = 32
)

// decodedJWS is a compact JWS taken apart; nothing is verified yet.
type decodedJWS struct {
	header map[string]any
	// payload is nil for a detached payload.
	payload      map[string]any
	signingInput []byte
	signature    []byte
}

// decodeCompactJWS splits a compact JWS whose header and payload are JSON objects.
//
// It has exactly three segments, each canonical unpadded base64url.
// The header's alg is a string.
// With a detached payload (RFC 7515 Appendix F), the payload segment is empty and the signing
// input is made with the given bytes instead.
// It answers false when anything is malformed.
func decodeCompactJWS(jws string, detached []byte, isDetached bool) (*decodedJWS, bool) {
	segments := strings.Split(jws, ".")
	if len(segments) != 3 {
		return nil, false
	}
	headerSegment, payloadSegment, signatureSegment := segments[0], segments[1], segments[2]
	header, ok := jsonObject(headerSegment)
	if !ok {
		return nil, false
	}
	signature, ok := fromBase64URL(signatureSegment)
	if !ok {
		return nil, false
	}
	if _, ok := header["alg"].(string); !ok {
		return nil, false
	}
	if isDetached {
		if payloadSegment != "" {
			return nil, false
		}
		return &decodedJWS{
			header:       header,
			signingInput: []byte(headerSegment + "." + base64URL(detached)),
			signature:    signature,
		}, true
	}
	payload, ok := jsonObject(payloadSegment)
	if !ok {
		return nil, false
	}
	return &decodedJWS{
		header:       header,
		payload:      payload,
		signingInput: []byte(headerSegment + "." + payloadSegment),
		signature:    signature,
	}, true
}

// keysFor picks the keys that may have signed a document.
// If a key has a kid equal to the header's kid, only that key is tried.
// Otherwise every key without a kid is tried (a PEM has none).
func keysFor(set *KeySet, kid any) []*PublicKey {
	if s, ok := kid.(string); ok {
		for i := range set.keys {
			if k := &set.keys[i]; k.KeyID != nil && *k.KeyID == s {
				return []*PublicKey{k}
			}
		}
	}
	var keys []*PublicKey
	for i := range set.keys {
		if set.keys[i].KeyID == nil {
			keys = append(keys, &set.keys[i])
		}
	}
	return keys
}

// signatureCode checks the signature with the keys keysFor picks.
// It answers "" when one verifies, CodeUnknownKey when there is no key to try, and
// CodeSignatureInvalid when none of those tried verifies.
func signatureCode(decoded *decodedJWS, set *KeySet) ErrorCode {
	candidates := keysFor(set, decoded.header["kid"])
	if len(candidates) == 0 {
		return CodeUnknownKey
	}
	for _, key := range candidates {
		if signatureVerifies(decoded, key) {
			return ""
		}
	}
	return CodeSignatureInvalid
}

func signatureVerifies(decoded *decodedJWS, key *PublicKey) bool {
	// No JWS extension is implemented, so a critical one invalidates the document (RFC 7515 §4.1.11).
	if _, present := decoded.header["crit"]; present {
		return false
	}
	alg, _ := decoded.header["alg"].(string)
	if !(alg == key.Alg || key.Type == KeyEd25519 && alg == "Ed25519") {
		return false
	}
	signature := decoded.signature
	switch pub := key.key.(type) {
	case ed25519.PublicKey:
		// Verify refuses a signature whose S is not below the group order.
		return len(signature) == ed25519.SignatureSize && ed25519.Verify(pub, decoded.signingInput, signature)
	case *ecdsa.PublicKey:
		// Only the 64-byte R||S form is JWS; a DER signature is refused.
		if len(signature) != es256SignatureSize {
			return false
		}
		digest := sha256.Sum256(decoded.signingInput)
		r := new(big.Int).SetBytes(signature[:32])
		s := new(big.Int).SetBytes(signature[32:])
		return ecdsa.Verify(pub, digest[:], r, s)
	case *rsa.PublicKey:
		// OpenSSL (behind JavaScript's WebCrypto) reads a signature shorter than the modulus as a
		// number with leading zeros; Go wants the full length, so the zeros are put back.
		size := pub.Size()
		if len(signature) > size {
			return false
		}
		if len(signature) < size {
			padded := make([]byte, size)
			copy(padded[size-len(signature):], signature)
			signature = padded
		}
		digest := sha256.Sum256(decoded.signingInput)
		// PS256: RSASSA-PSS with SHA-256, MGF1 with SHA-256, and a salt of exactly 32 bytes.
		err := rsa.VerifyPSS(pub, crypto.SHA256, digest[:], signature,
			&rsa.PSSOptions{SaltLength: pssSaltLength, Hash: crypto.SHA256})
		return err == nil
	}
	return false
}
