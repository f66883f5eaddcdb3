package licensing

import (
	"fmt"
	"strconv"
	"time"
)

const activationTyp = "activation+jwt"

var activationMessages = map[ErrorCode]string{
	CodeMalformed:           "The file is not a signed activation file",
	CodeUnknownKey:          "The activation was signed by a key pair this key set does not hold",
	CodeSignatureInvalid:    "The signature does not verify with the key",
	CodeNonceMismatch:       "The activation answers another request",
	CodeMachineKeyMismatch:  "The activation was made for another machine's key",
	CodeFingerprintMismatch: "The activation is for another machine",
	CodeProductMismatch:     "The activation belongs to another product",
	CodeNotYetValid:         "The activation is not valid yet",
	CodeExpired:             "The activation has expired",
}

// Activation is what an activation file says: the seat an air-gapped machine holds.
type Activation struct {
	ActivationID   string            `json:"activation_id"`   // jti
	Serial         string            `json:"serial"`          // sub
	LicenseID      string            `json:"license_id"`      //
	OrganizationID string            `json:"organization_id"` // iss
	ProductID      string            `json:"product_id"`
	ProductCode    string            `json:"product_code"`
	Features       []string          `json:"features"`
	Fingerprint    string            `json:"fingerprint"`
	Components     map[string]string `json:"components"`
	// IssuedAt is when the file was signed (iat), in ISO 8601.
	IssuedAt string `json:"issued_at"`
	// ExpiresAt is when the activation ends (exp), in ISO 8601.
	ExpiresAt string `json:"expires_at"`
	// Claims is the signed payload as it is.
	Claims map[string]any `json:"-"`
}

// ActivationResult is the verdict on an activation file.
type ActivationResult struct {
	// Valid is true exactly when Errors is empty.
	Valid bool `json:"valid"`
	// Activation is the decoded activation whenever the file could be decoded, even when it is
	// not valid; nil when the file is malformed.
	Activation *Activation `json:"activation"`
	// Errors holds every problem that applies, in a fixed order.
	Errors []VerifyError `json:"errors"`
}

// Has reports whether the verdict holds the code.
func (r ActivationResult) Has(code ErrorCode) bool { return hasCode(r.Errors, code) }

// ActivationOptions says what to check an activation file against.
type ActivationOptions struct {
	// Now is the time to check against; the zero time means the clock's.
	Now time.Time
	// Nonce is the request's nonce: an answer to another request is refused. Empty: not checked.
	Nonce string
	// MachineKey is the machine's key of the request, as a JWK: its "x" is compared with the one
	// the activation was made for. Nil: not checked.
	MachineKey map[string]any
	// Fingerprint is this machine's fingerprint. Empty: not checked.
	Fingerprint string
	// ProductID is the product the activation must be for. Empty: not checked.
	ProductID string
	// ClockTolerance is leeway for a skewed clock (0 or more), at both ends.
	ClockTolerance time.Duration
}

// VerifyActivationFile verifies an activation file offline, with the product's public key.
//
// The algorithm comes from the key, never from the file.
// A bad file is a result, not an error: the error is only for a nil key set or unusable options.
//
// The error codes come in this order: malformed (alone), then unknown_key or signature_invalid,
// nonce_mismatch, machine_key_mismatch, fingerprint_mismatch, product_mismatch, not_yet_valid,
// expired.
func VerifyActivationFile(file string, keys *KeySet, options ActivationOptions) (ActivationResult, error) {
	if keys == nil {
		return ActivationResult{}, ErrNoKeys
	}
	if options.ClockTolerance < 0 {
		return ActivationResult{}, fmt.Errorf("%w: the clock tolerance is negative", ErrInvalidOptions)
	}
	nowMs := millisOf(nowOf(options.Now))
	toleranceMs := durationMillis(options.ClockTolerance)

	decoded, ok := decodeCompactJWS(trimSpace(file), nil, false)
	var claims *activationClaims
	if ok && decoded.header["typ"] == activationTyp {
		claims, ok = readActivationClaims(decoded.payload)
	} else {
		ok = false
	}
	if !ok {
		return ActivationResult{Errors: errorsOf([]ErrorCode{CodeMalformed}, activationMessages)}, nil
	}

	var codes []ErrorCode
	if code := signatureCode(decoded, keys); code != "" {
		codes = append(codes, code)
	}
	if options.Nonce != "" && claims.nonce != options.Nonce {
		codes = append(codes, CodeNonceMismatch)
	}
	if options.MachineKey != nil {
		if x, ok := options.MachineKey["x"].(string); !ok || x != claims.machineX {
			codes = append(codes, CodeMachineKeyMismatch)
		}
	}
	if options.Fingerprint != "" && claims.activation.Fingerprint != options.Fingerprint {
		codes = append(codes, CodeFingerprintMismatch)
	}
	if options.ProductID != "" && claims.activation.ProductID != options.ProductID {
		codes = append(codes, CodeProductMismatch)
	}
	if float64(claims.nbf)*1000 > nowMs+toleranceMs {
		codes = append(codes, CodeNotYetValid)
	}
	if float64(claims.exp)*1000 <= nowMs-toleranceMs {
		codes = append(codes, CodeExpired)
	}
	return ActivationResult{
		Valid:      len(codes) == 0,
		Activation: claims.activation,
		Errors:     errorsOf(codes, activationMessages),
	}, nil
}

type activationClaims struct {
	activation    *Activation
	nonce         string
	machineX      string
	iat, nbf, exp int64
}

// readActivationClaims checks the payload's shape.
// v is 1; jti, sub, iss, license_id, product_id, product_code, fingerprint and nonce are strings;
// features is an array of strings; components is an object (or, as in JavaScript, an array)
// of strings; cnf.jwk.x is a string; iat, nbf and exp are integers that fit in a JavaScript Date.
func readActivationClaims(c map[string]any) (*activationClaims, bool) {
	if v, ok := c["v"].(float64); !ok || v != 1 {
		return nil, false
	}
	a := &Activation{Claims: c}
	claims := &activationClaims{activation: a}
	for _, field := range []struct {
		name string
		into *string
	}{
		{"jti", &a.ActivationID}, {"sub", &a.Serial}, {"iss", &a.OrganizationID},
		{"license_id", &a.LicenseID}, {"product_id", &a.ProductID}, {"product_code", &a.ProductCode},
		{"fingerprint", &a.Fingerprint}, {"nonce", &claims.nonce},
	} {
		s, ok := c[field.name].(string)
		if !ok {
			return nil, false
		}
		*field.into = s
	}
	var ok bool
	if a.Features, ok = stringList(c["features"]); !ok {
		return nil, false
	}
	if a.Components, ok = components(c["components"]); !ok {
		return nil, false
	}
	cnf, _ := c["cnf"].(map[string]any)
	jwk, _ := cnf["jwk"].(map[string]any)
	if claims.machineX, ok = jwk["x"].(string); !ok {
		return nil, false
	}
	for _, field := range []struct {
		name string
		into *int64
	}{{"iat", &claims.iat}, {"nbf", &claims.nbf}, {"exp", &claims.exp}} {
		n, ok := safeInteger(c[field.name])
		if !ok || !isDateSeconds(float64(n)) {
			return nil, false
		}
		*field.into = n
	}
	a.IssuedAt = isoOfMillis(claims.iat * 1000)
	a.ExpiresAt = isoOfMillis(claims.exp * 1000)
	return claims, true
}

// components reads an object whose values are strings.
// JavaScript also takes an array of strings here, and copies it as an object keyed "0", "1", …
func components(v any) (map[string]string, bool) {
	out := map[string]string{}
	switch v := v.(type) {
	case map[string]any:
		for k, item := range v {
			s, ok := item.(string)
			if !ok {
				return nil, false
			}
			out[k] = s
		}
	case []any:
		for i, item := range v {
			s, ok := item.(string)
			if !ok {
				return nil, false
			}
			out[strconv.Itoa(i)] = s
		}
	default:
		return nil, false
	}
	return out, true
}
