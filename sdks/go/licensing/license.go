package licensing

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

const licenseTyp = "license+jwt"

// The kinds of license the service issues.
var licenseTypes = map[string]bool{
	"perpetual": true, "subscription": true, "trial": true, "node_locked": true, "floating": true,
}

var licenseMessages = map[ErrorCode]string{
	CodeMalformed:           "The license is not a signed license file",
	CodeSignatureInvalid:    "The signature does not verify with the key",
	CodeUnknownKey:          "The license was signed by a key pair this key set does not hold",
	CodeProductMismatch:     "The license belongs to another product",
	CodeNotYetValid:         "The license is not valid yet",
	CodeExpired:             "The license has expired",
	CodeFileExpired:         "The license file has expired: check it out again",
	CodeFingerprintMismatch: "The license is bound to another machine",
}

// License is what a license file says, decoded from its signed payload.
// Its JSON form has the same members as the other SDKs' (snake_case).
type License struct {
	LicenseID      string   `json:"license_id"`      // jti
	Serial         string   `json:"serial"`          // sub
	OrganizationID string   `json:"organization_id"` // iss
	ProductID      string   `json:"product_id"`
	ProductCode    string   `json:"product_code"`
	LicenseType    string   `json:"license_type"`
	CustomerID     *string  `json:"customer_id"`
	CustomerEmail  *string  `json:"customer_email"`
	Features       []string `json:"features"`
	// Entitlements are the entitlement codes the file carries; empty when it carries none.
	Entitlements []string `json:"entitlements"`
	MaxSeats     int64    `json:"max_seats"`
	// HardwareBinding is the machine a node-locked license is bound to, or nil.
	HardwareBinding *HardwareBinding `json:"hardware_binding"`
	// Fingerprint is the machine a checkout file of an activation is bound to, or nil.
	Fingerprint *string `json:"fingerprint"`
	ValidFrom   string  `json:"valid_from"`
	// ValidUntil is nil for a license that never ends.
	ValidUntil *string `json:"valid_until"`
	// IssuedAt is when the file was signed (iat), in ISO 8601.
	IssuedAt string `json:"issued_at"`
	// ExpiresAt is when the file stops verifying (exp), or nil when it has no exp.
	ExpiresAt *string `json:"expires_at"`
	// IsExpired says the license has ended.
	IsExpired bool `json:"is_expired"`
	// IsFileExpired says a checkout file is past its own expiry: check it out again.
	IsFileExpired bool `json:"is_file_expired"`
	// Policy is a checkout file's policy limits, or nil when the file has none.
	Policy *Policy `json:"policy,omitempty"`
	// KeyID is the header's kid when it is a string, else nil.
	KeyID *string `json:"key_id"`
	// Algorithm is the header's alg.
	Algorithm string `json:"algorithm"`
	// Claims is the signed payload as it is.
	Claims map[string]any `json:"-"`
}

// HardwareBinding names the machine a license is bound to.
type HardwareBinding struct {
	Fingerprint string `json:"fingerprint"`
}

// Policy is the limits of a license's policy, as a checkout file carries them (claim "policy").
// Every member is optional: a nil field is absent or null.
type Policy struct {
	ID                       *string
	Name                     *string
	MaxMachines              *int64
	MaxProcesses             *int64
	MaxUses                  *int64
	UsesReset                *string // day, week or month (UTC); nil: never
	HeartbeatIntervalSeconds *int64
	HeartbeatGraceSeconds    *int64
	CheckInIntervalDays      *int64
	Overage                  *string
	MachineMatching          *string
	// Members is the claim copied whole, with the members this version does not know.
	Members map[string]any
}

// MarshalJSON writes the policy as it was signed.
func (p Policy) MarshalJSON() ([]byte, error) {
	return marshalJSONValue(p.Members)
}

// LicenseResult is the verdict on a license file.
type LicenseResult struct {
	// Valid is true exactly when Errors is empty.
	Valid bool `json:"valid"`
	// License is the decoded license whenever the file could be decoded, even when it is not
	// valid; nil when the file is malformed.
	License *License `json:"license"`
	// Errors holds every problem that applies, in a fixed order.
	// After malformed nothing else is checked.
	Errors []VerifyError `json:"errors"`
}

// Has reports whether the verdict holds the code.
func (r LicenseResult) Has(code ErrorCode) bool { return hasCode(r.Errors, code) }

// LicenseOptions says what to check a license against.
type LicenseOptions struct {
	// Now is the time to check against; the zero time means the clock's.
	Now time.Time
	// ProductID is the product the license must be for; empty: not checked.
	ProductID string
	// Fingerprint is this machine's: a license bound to another machine is refused, and so is a
	// checkout file of another machine's activation. Empty: not checked.
	Fingerprint string
	// ClockTolerance is leeway for a skewed clock (0 or more).
	// It applies to both ends of the validity window and to a checkout file's expiry.
	ClockTolerance time.Duration
}

// VerifyLicense verifies a license file offline.
//
// The input is the file's bytes, its text, or the API's base64 license_blob.
// The algorithm comes from the key, never from the file.
// A bad license is a result, not an error: the error is only for a nil key set or unusable options.
//
// The error codes come in this order: malformed (alone), then unknown_key or signature_invalid,
// product_mismatch, not_yet_valid, expired, file_expired, fingerprint_mismatch.
func VerifyLicense(input []byte, keys *KeySet, options LicenseOptions) (LicenseResult, error) {
	if keys == nil {
		return LicenseResult{}, ErrNoKeys
	}
	if options.ClockTolerance < 0 {
		return LicenseResult{}, fmt.Errorf("%w: the clock tolerance is negative", ErrInvalidOptions)
	}
	nowMs := millisOf(nowOf(options.Now))
	toleranceMs := durationMillis(options.ClockTolerance)

	decoded, claims, ok := decodeLicense(input)
	if !ok {
		return LicenseResult{Errors: errorsOf([]ErrorCode{CodeMalformed}, licenseMessages)}, nil
	}

	var codes []ErrorCode
	if code := signatureCode(decoded, keys); code != "" {
		codes = append(codes, code)
	}
	if options.ProductID != "" && claims.productID != options.ProductID {
		codes = append(codes, CodeProductMismatch)
	}
	if float64(claims.nbf)*1000 > nowMs+toleranceMs {
		codes = append(codes, CodeNotYetValid)
	}
	expired, fileExpired := endsOf(claims, nowMs-toleranceMs)
	if expired {
		codes = append(codes, CodeExpired)
	}
	if fileExpired {
		codes = append(codes, CodeFileExpired)
	}
	if options.Fingerprint != "" &&
		(claims.binding != nil && *claims.binding != options.Fingerprint ||
			claims.fingerprint != nil && *claims.fingerprint != options.Fingerprint) {
		codes = append(codes, CodeFingerprintMismatch)
	}
	return LicenseResult{
		Valid:   len(codes) == 0,
		License: summaryOf(decoded.header, claims, expired, fileExpired),
		Errors:  errorsOf(codes, licenseMessages),
	}, nil
}

// DecodeLicense reads the license a file holds, but does NOT verify it: for display and
// diagnostics only. It answers false when the input is not a license file.
func DecodeLicense(input []byte) (*License, bool) {
	decoded, claims, ok := decodeLicense(input)
	if !ok {
		return nil, false
	}
	expired, fileExpired := endsOf(claims, millisOf(time.Now()))
	return summaryOf(decoded.header, claims, expired, fileExpired), true
}

// LicenseBlob is the API's license_blob for a license file's text: standard base64 of its bytes.
func LicenseBlob(jws string) string {
	return base64.StdEncoding.EncodeToString([]byte(jws))
}

// licenseClaims is the part of the payload the verifier reads.
type licenseClaims struct {
	jti, sub, iss, productID, productCode, licenseType string
	customerID, customerEmail                          *string
	iat, nbf                                           int64
	exp                                                *int64
	features, entitlements                             []string
	maxSeats                                           int64
	binding                                            *string
	validFrom                                          string
	validUntil                                         *string
	fingerprint                                        *string
	policy                                             *Policy
	raw                                                map[string]any
}

func decodeLicense(input []byte) (*decodedJWS, *licenseClaims, bool) {
	jws, ok := compactJWSOf(input)
	if !ok {
		return nil, nil, false
	}
	decoded, ok := decodeCompactJWS(jws, nil, false)
	// A JWS of another type is not a license, whoever signed it.
	if !ok || decoded.header["typ"] != licenseTyp {
		return nil, nil, false
	}
	claims, ok := readLicenseClaims(decoded.payload)
	if !ok {
		return nil, nil, false
	}
	return decoded, claims, true
}

// compactJWSOf finds the compact JWS in the input.
// A JWS always holds dots and base64 never does, which tells the file's text from a license_blob.
// Surrounding whitespace (an editor's final newline, a pasted blob's line breaks) is dropped.
// A blob loses all its whitespace, and must then be canonical padded standard base64 of UTF-8
// text that holds a dot. That text is not trimmed again.
func compactJWSOf(input []byte) (string, bool) {
	if !utf8.Valid(input) {
		return "", false
	}
	trimmed := trimSpace(string(input))
	if strings.Contains(trimmed, ".") {
		return trimmed, true
	}
	bytes, ok := fromBase64(removeSpace(trimmed))
	if !ok || !utf8.Valid(bytes) || !strings.Contains(string(bytes), ".") {
		return "", false
	}
	return string(bytes), true
}

// readLicenseClaims checks the payload field by field, as the service does.
// A payload of another shape (another issuer's, or a future format version's) is no license.
// Its times must fit in a JavaScript Date.
func readLicenseClaims(c map[string]any) (*licenseClaims, bool) {
	claims := &licenseClaims{raw: c}
	var ok bool
	if v, isNumber := c["v"].(float64); !isNumber || v != 1 {
		return nil, false
	}
	for _, field := range []struct {
		name string
		into *string
	}{
		{"jti", &claims.jti}, {"sub", &claims.sub}, {"iss", &claims.iss},
		{"product_id", &claims.productID}, {"product_code", &claims.productCode},
		{"valid_from", &claims.validFrom},
	} {
		if *field.into, ok = c[field.name].(string); !ok {
			return nil, false
		}
	}
	if claims.iat, ok = safeInteger(c["iat"]); !ok {
		return nil, false
	}
	if claims.nbf, ok = safeInteger(c["nbf"]); !ok {
		return nil, false
	}
	if value, present := c["exp"]; present {
		exp, ok := safeInteger(value)
		if !ok {
			return nil, false
		}
		claims.exp = &exp
	}
	if claims.licenseType, ok = c["license_type"].(string); !ok || !licenseTypes[claims.licenseType] {
		return nil, false
	}
	if claims.customerID, ok = nullableString(c, "customer_id"); !ok {
		return nil, false
	}
	if claims.customerEmail, ok = nullableString(c, "customer_email"); !ok {
		return nil, false
	}
	if claims.features, ok = stringList(c["features"]); !ok {
		return nil, false
	}
	if claims.maxSeats, ok = safeInteger(c["max_seats"]); !ok {
		return nil, false
	}
	switch binding := c["hardware_binding"].(type) {
	case nil:
		if _, present := c["hardware_binding"]; !present {
			return nil, false
		}
	case map[string]any:
		fingerprint, ok := binding["fingerprint"].(string)
		if !ok {
			return nil, false
		}
		claims.binding = &fingerprint
	default:
		return nil, false
	}
	if claims.validUntil, ok = nullableString(c, "valid_until"); !ok {
		return nil, false
	}
	claims.entitlements = []string{}
	if value, present := c["entitlements"]; present {
		if claims.entitlements, ok = stringList(value); !ok {
			return nil, false
		}
	}
	if value, present := c["fingerprint"]; present {
		s, ok := value.(string)
		if !ok {
			return nil, false
		}
		claims.fingerprint = &s
	}
	if value, present := c["policy"]; present {
		if claims.policy, ok = readPolicy(value); !ok {
			return nil, false
		}
	}
	// A time no Date can hold is no license's: refused here, so that it can always be shown.
	if !isDateSeconds(float64(claims.iat)) || !isDateSeconds(float64(claims.nbf)) ||
		claims.exp != nil && !isDateSeconds(float64(*claims.exp)) {
		return nil, false
	}
	return claims, true
}

// readPolicy checks the policy's known members; members this version does not know are kept.
func readPolicy(value any) (*Policy, bool) {
	p, ok := value.(map[string]any)
	if !ok {
		return nil, false
	}
	policy := &Policy{Members: copyJSONObject(p)}
	for _, field := range []struct {
		name string
		into **int64
	}{
		{"max_machines", &policy.MaxMachines}, {"max_processes", &policy.MaxProcesses},
		{"max_uses", &policy.MaxUses}, {"heartbeat_interval_seconds", &policy.HeartbeatIntervalSeconds},
		{"heartbeat_grace_seconds", &policy.HeartbeatGraceSeconds},
		{"check_in_interval_days", &policy.CheckInIntervalDays},
	} {
		value, present := p[field.name]
		if !present || value == nil {
			continue
		}
		n, ok := safeInteger(value)
		if !ok {
			return nil, false
		}
		*field.into = &n
	}
	for _, field := range []struct {
		name     string
		into     **string
		nullable bool
	}{
		{"id", &policy.ID, false}, {"name", &policy.Name, false}, {"overage", &policy.Overage, false},
		{"machine_matching", &policy.MachineMatching, false}, {"uses_reset", &policy.UsesReset, true},
	} {
		value, present := p[field.name]
		if !present || value == nil && field.nullable {
			continue
		}
		s, ok := value.(string)
		if !ok {
			return nil, false
		}
		*field.into = &s
	}
	return policy, true
}

// nullableString reads a member that must be present, as a string or null.
func nullableString(c map[string]any, name string) (*string, bool) {
	value, present := c[name]
	if !present {
		return nil, false
	}
	if value == nil {
		return nil, true
	}
	s, ok := value.(string)
	if !ok {
		return nil, false
	}
	return &s, true
}

func stringList(value any) ([]string, bool) {
	list, ok := value.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, item := range list {
		s, ok := item.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// fileExpiryOf is a checkout file's own expiry (Unix seconds), apart from the license's end.
// It is the file's exp when the license has no valid_until, or when exp comes before
// valid_until (read as a date, to the second, rounded down).
// An ordinary file's exp is its valid_until: no own expiry then.
// An unreadable valid_until gives no own expiry.
func fileExpiryOf(claims *licenseClaims) (int64, bool) {
	if claims.exp == nil {
		return 0, false
	}
	if claims.validUntil == nil {
		return *claims.exp, true
	}
	validUntilMs, ok := parseDate(*claims.validUntil)
	if !ok {
		return 0, false
	}
	if *claims.exp < floorDiv(validUntilMs, 1000) {
		return *claims.exp, true
	}
	return 0, false
}

// endsOf says which ends the file has passed at atMs.
// An ordinary file's exp is the license's end.
// A checkout file's exp is the file's own end, and its valid_until the license's.
func endsOf(claims *licenseClaims, atMs float64) (expired, fileExpired bool) {
	fileExp, hasFileExp := fileExpiryOf(claims)
	if hasFileExp {
		fileExpired = float64(fileExp)*1000 <= atMs
		if claims.validUntil != nil {
			// fileExpiryOf read valid_until already, so it is a date here.
			validUntilMs, _ := parseDate(*claims.validUntil)
			expired = float64(floorDiv(validUntilMs, 1000))*1000 <= atMs
		}
	} else if claims.exp != nil {
		expired = float64(*claims.exp)*1000 <= atMs
	}
	return expired, fileExpired
}

func summaryOf(header map[string]any, claims *licenseClaims, expired, fileExpired bool) *License {
	license := &License{
		LicenseID:      claims.jti,
		Serial:         claims.sub,
		OrganizationID: claims.iss,
		ProductID:      claims.productID,
		ProductCode:    claims.productCode,
		LicenseType:    claims.licenseType,
		CustomerID:     claims.customerID,
		CustomerEmail:  claims.customerEmail,
		Features:       claims.features,
		Entitlements:   claims.entitlements,
		MaxSeats:       claims.maxSeats,
		Fingerprint:    claims.fingerprint,
		ValidFrom:      claims.validFrom,
		ValidUntil:     claims.validUntil,
		IssuedAt:       isoOfMillis(claims.iat * 1000),
		IsExpired:      expired,
		IsFileExpired:  fileExpired,
		Policy:         claims.policy,
		Algorithm:      header["alg"].(string),
		Claims:         claims.raw,
	}
	if claims.binding != nil {
		license.HardwareBinding = &HardwareBinding{Fingerprint: *claims.binding}
	}
	if claims.exp != nil {
		expiresAt := isoOfMillis(*claims.exp * 1000)
		license.ExpiresAt = &expiresAt
	}
	if kid, ok := header["kid"].(string); ok {
		license.KeyID = &kid
	}
	return license
}
