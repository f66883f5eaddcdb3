package licensing

import (
	"fmt"
	"time"
)

const answerTyp = "licensing-answer+jws"

// The defaults of SignedAnswerOptions.
const (
	DefaultAnswerMaxAge         = 300 * time.Second
	DefaultAnswerClockTolerance = 60 * time.Second
)

var answerMessages = map[ErrorCode]string{
	CodeUnsigned:         "The answer carries no Licensing-Signature",
	CodeMalformed:        "Licensing-Signature is not a signed answer",
	CodeUnknownKey:       "The answer was signed by a key this key set does not hold",
	CodeSignatureInvalid: "The signature does not verify over this body",
	CodeNonceMismatch:    "The answer was signed for another request (its nonce is not the one sent)",
	CodeTooOld:           "The signature is older than the maximum age",
	CodeNotYetSigned:     "The signature is dated in the future",
}

// SignedAnswer is an answer of the online API, as received.
type SignedAnswer struct {
	// Body is the answer's body exactly as received: its bytes are what was signed.
	Body []byte
	// Signature is the Licensing-Signature header; empty when the answer had none.
	Signature string
	// Nonce is the Licensing-Nonce this request sent: an answer to another request is refused.
	Nonce string
}

// SignedAnswerOptions says what to check a signed answer against.
type SignedAnswerOptions struct {
	// Now is the time to check against; the zero time means the clock's.
	Now time.Time
	// MaxAge is how old a signature may be; nil means DefaultAnswerMaxAge (300 seconds).
	MaxAge *time.Duration
	// ClockTolerance is leeway for a clock ahead of the service's; nil means
	// DefaultAnswerClockTolerance (60 seconds). Use Seconds(0) for none.
	ClockTolerance *time.Duration
}

// SignedAnswerResult is the verdict on a signed answer.
type SignedAnswerResult struct {
	// Valid is true exactly when Errors is empty: the body is what the service said, to this request.
	Valid bool `json:"valid"`
	// Errors holds every problem that applies, in a fixed order.
	Errors []VerifyError `json:"errors"`
	// SignedAt is when the service signed it (the header's iat, ISO 8601), or nil when the answer
	// is unsigned or malformed.
	SignedAt *string `json:"signed_at"`
}

// Has reports whether the verdict holds the code.
func (r SignedAnswerResult) Has(code ErrorCode) bool { return hasCode(r.Errors, code) }

// VerifySignedAnswer checks an online answer against its Licensing-Signature.
//
// The signature is a compact JWS with a detached payload: the body's bytes.
// Verify it with the organization's response keys, shipped with the application.
// It checks that the service signed these very bytes, for the nonce this request sent, recently.
// The error is only for a nil key set or unusable options.
//
// The error codes come in this order: unsigned (alone), malformed (alone), then unknown_key or
// signature_invalid, nonce_mismatch, too_old, not_yet_signed.
func VerifySignedAnswer(answer SignedAnswer, keys *KeySet, options SignedAnswerOptions) (SignedAnswerResult, error) {
	if keys == nil {
		return SignedAnswerResult{}, ErrNoKeys
	}
	maxAge, tolerance := DefaultAnswerMaxAge, DefaultAnswerClockTolerance
	if options.MaxAge != nil {
		maxAge = *options.MaxAge
	}
	if options.ClockTolerance != nil {
		tolerance = *options.ClockTolerance
	}
	if maxAge < 0 || tolerance < 0 {
		return SignedAnswerResult{}, fmt.Errorf("%w: a negative maximum age or clock tolerance", ErrInvalidOptions)
	}
	if answer.Signature == "" {
		return SignedAnswerResult{Errors: errorsOf([]ErrorCode{CodeUnsigned}, answerMessages)}, nil
	}
	body := answer.Body
	if body == nil {
		body = []byte{}
	}
	decoded, ok := decodeCompactJWS(trimSpace(answer.Signature), body, true)
	var iat float64
	if ok {
		iat, ok = decoded.header["iat"].(float64)
	}
	if !ok || decoded.header["typ"] != answerTyp || !isDateSeconds(iat) {
		return SignedAnswerResult{Errors: errorsOf([]ErrorCode{CodeMalformed}, answerMessages)}, nil
	}

	var codes []ErrorCode
	if code := signatureCode(decoded, keys); code != "" {
		codes = append(codes, code)
	}
	if nonce, ok := decoded.header["nonce"].(string); !ok || nonce != answer.Nonce {
		codes = append(codes, CodeNonceMismatch)
	}
	nowMs := millisOf(nowOf(options.Now))
	maxAgeMs, toleranceMs := durationMillis(maxAge), durationMillis(tolerance)
	iatMs := float64(iat * 1000)
	if iatMs < nowMs-maxAgeMs-toleranceMs {
		codes = append(codes, CodeTooOld)
	}
	if iatMs > nowMs+toleranceMs {
		codes = append(codes, CodeNotYetSigned)
	}
	signedAt := isoOfSeconds(iat)
	return SignedAnswerResult{
		Valid:    len(codes) == 0,
		Errors:   errorsOf(codes, answerMessages),
		SignedAt: &signedAt,
	}, nil
}
