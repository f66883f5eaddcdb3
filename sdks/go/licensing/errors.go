package licensing

import (
	"errors"
	"time"
)

// ErrorCode says why a document is refused.
// The codes are the same in every SDK of the platform.
type ErrorCode string

const (
	// CodeMalformed: the input is not a signed document of the expected kind.
	// It comes alone: nothing else is checked.
	CodeMalformed ErrorCode = "malformed"
	// CodeUnknownKey: no key of the set may have signed it (its kid names none, and every key has a kid).
	CodeUnknownKey ErrorCode = "unknown_key"
	// CodeSignatureInvalid: the signature does not verify with the keys tried.
	CodeSignatureInvalid ErrorCode = "signature_invalid"
	// CodeProductMismatch: the document belongs to another product.
	CodeProductMismatch ErrorCode = "product_mismatch"
	// CodeNotYetValid: the license or activation is not valid yet (nbf).
	CodeNotYetValid ErrorCode = "not_yet_valid"
	// CodeExpired: the license, or the activation, has ended.
	CodeExpired ErrorCode = "expired"
	// CodeFileExpired: a checked-out license file is past its own expiry: check it out again.
	CodeFileExpired ErrorCode = "file_expired"
	// CodeFingerprintMismatch: the license or activation is bound to another machine.
	CodeFingerprintMismatch ErrorCode = "fingerprint_mismatch"
	// CodeVersionRegression: the revocation list is older than the one held.
	CodeVersionRegression ErrorCode = "version_regression"
	// CodeVersionGap: the delta does not start from the list held: fetch the full list.
	CodeVersionGap ErrorCode = "version_gap"
	// CodeUnsigned: the answer carries no Licensing-Signature. It comes alone.
	CodeUnsigned ErrorCode = "unsigned"
	// CodeNonceMismatch: the answer or activation was made for another request.
	CodeNonceMismatch ErrorCode = "nonce_mismatch"
	// CodeTooOld: the answer's signature is older than the maximum age.
	CodeTooOld ErrorCode = "too_old"
	// CodeNotYetSigned: the answer's signature is dated in the future.
	CodeNotYetSigned ErrorCode = "not_yet_signed"
	// CodeMachineKeyMismatch: the activation was made for another machine's key.
	CodeMachineKeyMismatch ErrorCode = "machine_key_mismatch"
)

// VerifyError is one reason a document is refused: a code, and a sentence for people.
type VerifyError struct {
	Code    ErrorCode `json:"code"`
	Message string    `json:"message"`
}

func (e VerifyError) Error() string {
	return string(e.Code) + ": " + e.Message
}

// ErrInvalidOptions says the options cannot be used, for example a negative clock tolerance.
var ErrInvalidOptions = errors.New("licensing: invalid options")

// ErrNoKeys says no key set was given.
var ErrNoKeys = errors.New("licensing: no key set")

func errorsOf(codes []ErrorCode, messages map[ErrorCode]string) []VerifyError {
	out := make([]VerifyError, 0, len(codes))
	for _, code := range codes {
		out = append(out, VerifyError{Code: code, Message: messages[code]})
	}
	return out
}

func hasCode(errors []VerifyError, code ErrorCode) bool {
	for _, e := range errors {
		if e.Code == code {
			return true
		}
	}
	return false
}

// nowOf is the time to check against: the given one, or the clock's when it is zero.
func nowOf(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}

// Seconds is a duration of s seconds, as a pointer: for options whose default is not zero.
func Seconds(s float64) *time.Duration {
	d := time.Duration(s * float64(time.Second))
	return &d
}
