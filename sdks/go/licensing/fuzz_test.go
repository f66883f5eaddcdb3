package licensing_test

// A fuzz pass over mutated vectors: bit flips, truncations, random bytes, whitespace, random
// JSON in the signed segments, and mutated keys.
// Every verifier must answer a verdict that holds together, and never panic.
// The loop is seeded, so a failure is repeated by running the test again.
// LICENSING_FUZZ_ITERATIONS sets the number of iterations (default 40000).
// The Fuzz targets below run their seeds in `go test`, and search further with `go test -fuzz`.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	licensing "github.com/licensing-platform/licensing/sdks/go/licensing"
)

const fuzzSeed = 20270301

// The codes each kind may answer, in the order they must come.
var codeOrder = map[string][]licensing.ErrorCode{
	"license": {
		licensing.CodeMalformed, licensing.CodeUnknownKey, licensing.CodeSignatureInvalid,
		licensing.CodeProductMismatch, licensing.CodeNotYetValid, licensing.CodeExpired,
		licensing.CodeFileExpired, licensing.CodeFingerprintMismatch,
	},
	"revocation-list": {
		licensing.CodeMalformed, licensing.CodeUnknownKey, licensing.CodeSignatureInvalid,
		licensing.CodeProductMismatch, licensing.CodeVersionRegression, licensing.CodeVersionGap,
	},
	"signed-answer": {
		licensing.CodeUnsigned, licensing.CodeMalformed, licensing.CodeUnknownKey,
		licensing.CodeSignatureInvalid, licensing.CodeNonceMismatch, licensing.CodeTooOld,
		licensing.CodeNotYetSigned,
	},
	"activation": {
		licensing.CodeMalformed, licensing.CodeUnknownKey, licensing.CodeSignatureInvalid,
		licensing.CodeNonceMismatch, licensing.CodeMachineKeyMismatch, licensing.CodeFingerprintMismatch,
		licensing.CodeProductMismatch, licensing.CodeNotYetValid, licensing.CodeExpired,
	},
}

// fuzzCase is a vector ready to run with another input.
type fuzzCase struct {
	kind    string
	id      string
	keys    *licensing.KeySet
	text    string // the document: a license file, a list, an activation file, or an answer's signature
	body    string // a signed answer's body
	nonce   string // a signed answer's nonce
	options options
}

func fuzzCases(t testing.TB) ([]fuzzCase, []string) {
	var cases []fuzzCase
	var keyTexts []string
	for _, nf := range readVectorFiles(t) {
		// Sorted, so that the seeded loop picks the same keys every run.
		names := make([]string, 0, len(nf.file.Keys))
		for name := range nf.file.Keys {
			names = append(names, name)
		}
		sortStrings(names)
		for _, name := range names {
			for member, raw := range nf.file.Keys[name] {
				if member == "pem" {
					var pem string
					mustUnmarshal(raw, &pem)
					keyTexts = append(keyTexts, pem)
				} else {
					keyTexts = append(keyTexts, string(raw))
				}
			}
		}
		if nf.file.Kind == "public-key" {
			continue
		}
		for _, v := range nf.file.Vectors {
			keys, err := keyOf(nf.file, v.Key)
			if err != nil {
				t.Fatalf("%s %s: %v", nf.name, v.ID, err)
			}
			c := fuzzCase{kind: nf.file.Kind, id: nf.name + " " + v.ID, keys: keys, options: options(v.Options)}
			var input struct {
				Text        *string `json:"text"`
				BytesBase64 *string `json:"bytes_base64"`
				Body        string  `json:"body"`
				Signature   *string `json:"signature"`
				Nonce       string  `json:"nonce"`
			}
			mustUnmarshal(v.Input, &input)
			switch {
			case input.Text != nil:
				c.text = *input.Text
			case input.BytesBase64 != nil:
				b, _ := base64.StdEncoding.DecodeString(*input.BytesBase64)
				c.text = string(b)
			case input.Signature != nil:
				c.text = *input.Signature
			}
			c.body, c.nonce = input.Body, input.Nonce
			cases = append(cases, c)
		}
	}
	return cases, keyTexts
}

// verdict is what any verifier answers, brought to one shape.
type verdict struct {
	valid    bool
	codes    []licensing.ErrorCode
	document any // the decoded license or activation, the list, or the signed_at
	json     []byte
}

// run verifies the case's document replaced by text (and, for an answer, body).
func (c fuzzCase) run(text, body string) (verdict, error) {
	o := c.options
	var v verdict
	var document any
	var err error
	var errs []licensing.VerifyError
	switch c.kind {
	case "license":
		var r licensing.LicenseResult
		r, err = licensing.VerifyLicense([]byte(text), c.keys, licensing.LicenseOptions{
			Now: o.now(), ProductID: o.str("product_id"), Fingerprint: o.str("fingerprint"),
			ClockTolerance: o.duration("clock_tolerance_seconds"),
		})
		v.valid, errs, document = r.Valid, r.Errors, r.License
		if r.License == nil {
			document = nil
		}
	case "revocation-list":
		opts := licensing.RevocationListOptions{ProductID: o.str("product_id")}
		if o.has("previous") {
			opts.Previous = &licensing.RevocationList{}
			mustUnmarshal(o["previous"], opts.Previous)
		}
		var r licensing.RevocationListResult
		r, err = licensing.VerifyRevocationList(text, c.keys, opts)
		v.valid, errs, document = r.Valid, r.Errors, r.List
		if r.List == nil {
			document = nil
		}
	case "signed-answer":
		opts := licensing.SignedAnswerOptions{Now: o.now()}
		if o.has("max_age_seconds") {
			opts.MaxAge = licensing.Seconds(o.seconds("max_age_seconds"))
		}
		if o.has("clock_tolerance_seconds") {
			opts.ClockTolerance = licensing.Seconds(o.seconds("clock_tolerance_seconds"))
		}
		var r licensing.SignedAnswerResult
		r, err = licensing.VerifySignedAnswer(licensing.SignedAnswer{Body: []byte(body), Signature: text, Nonce: c.nonce}, c.keys, opts)
		v.valid, errs, document = r.Valid, r.Errors, r.SignedAt
		if r.SignedAt == nil {
			document = nil
		}
	case "activation":
		opts := licensing.ActivationOptions{
			Now: o.now(), Nonce: o.str("nonce"), Fingerprint: o.str("fingerprint"),
			ProductID: o.str("product_id"), ClockTolerance: o.duration("clock_tolerance_seconds"),
		}
		if o.has("machine_key") {
			mustUnmarshal(o["machine_key"], &opts.MachineKey)
		}
		var r licensing.ActivationResult
		r, err = licensing.VerifyActivationFile(text, c.keys, opts)
		v.valid, errs, document = r.Valid, r.Errors, r.Activation
		if r.Activation == nil {
			document = nil
		}
	default:
		return v, fmt.Errorf("unknown kind %q", c.kind)
	}
	if err != nil {
		return v, err
	}
	for _, e := range errs {
		v.codes = append(v.codes, e.Code)
		if e.Message == "" {
			return v, fmt.Errorf("code %s has no message", e.Code)
		}
	}
	v.document = document
	v.json, err = json.Marshal(map[string]any{"valid": v.valid, "errors": errs, "document": document})
	return v, err
}

// check says what is wrong with a verdict, or nil.
func (c fuzzCase) check(v verdict) error {
	if v.valid != (len(v.codes) == 0) {
		return fmt.Errorf("valid is %v with codes %v", v.valid, v.codes)
	}
	order := codeOrder[c.kind]
	last := -1
	for _, code := range v.codes {
		at := -1
		for i, known := range order {
			if known == code {
				at = i
			}
		}
		if at < 0 {
			return fmt.Errorf("code %s is not one a %s verifier answers", code, c.kind)
		}
		if at <= last {
			return fmt.Errorf("codes %v are out of order or repeated", v.codes)
		}
		last = at
	}
	alone := map[licensing.ErrorCode]bool{licensing.CodeMalformed: true, licensing.CodeUnsigned: true}
	refused := false
	for _, code := range v.codes {
		if alone[code] {
			refused = true
			if len(v.codes) != 1 {
				return fmt.Errorf("%s comes with other codes: %v", code, v.codes)
			}
		}
	}
	if unknown, invalid := hasCodeIn(v.codes, licensing.CodeUnknownKey), hasCodeIn(v.codes, licensing.CodeSignatureInvalid); unknown && invalid {
		return errors.New("unknown_key and signature_invalid together")
	}
	switch c.kind {
	case "revocation-list":
		if (v.document != nil) != v.valid {
			return fmt.Errorf("a list is given exactly when valid (valid %v, list %v)", v.valid, v.document)
		}
	default:
		if (v.document != nil) == refused {
			return fmt.Errorf("the document is given exactly when not malformed or unsigned (codes %v)", v.codes)
		}
	}
	return nil
}

func hasCodeIn(codes []licensing.ErrorCode, code licensing.ErrorCode) bool {
	for _, c := range codes {
		if c == code {
			return true
		}
	}
	return false
}

// safely runs f and turns a panic into an error.
func safely(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

func TestFuzzMutatedVectors(t *testing.T) {
	iterations := 40000
	if s := os.Getenv("LICENSING_FUZZ_ITERATIONS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			t.Fatalf("LICENSING_FUZZ_ITERATIONS=%q is not a count", s)
		}
		iterations = n
	}
	cases, keyTexts := fuzzCases(t)
	rng := rand.New(rand.NewSource(fuzzSeed))
	started := time.Now()
	counts := map[string]int{}
	verdicts := map[bool]int{}
	for i := 0; i < iterations; i++ {
		// One iteration in ten mutates a key instead of a document.
		if i%10 == 9 {
			text := mutate(rng, keyTexts[rng.Intn(len(keyTexts))])
			counts["key"]++
			err := safely(func() error { return checkKey([]byte(text)) })
			if err != nil {
				t.Fatalf("iteration %d: key %q: %v", i, text, err)
			}
			continue
		}
		c := cases[rng.Intn(len(cases))]
		text, body := c.text, c.body
		if c.kind == "signed-answer" && rng.Intn(3) == 0 {
			body = mutate(rng, body)
		} else {
			text = mutate(rng, text)
		}
		counts[c.kind]++
		err := safely(func() error {
			v, err := c.run(text, body)
			if err != nil {
				return err
			}
			if err := c.check(v); err != nil {
				return err
			}
			verdicts[v.valid]++
			// The same input gets the same verdict.
			if i%7 == 0 {
				again, err := c.run(text, body)
				if err != nil {
					return err
				}
				if !bytes.Equal(again.json, v.json) || !reflect.DeepEqual(again.codes, v.codes) {
					return fmt.Errorf("two verdicts on one input: %s and %s", v.json, again.json)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("iteration %d (%s): text %q body %q: %v", i, c.id, text, body, err)
		}
	}
	t.Logf("%d iterations (%v) in %v: %d valid, %d refused",
		iterations, counts, time.Since(started).Round(time.Millisecond), verdicts[true], verdicts[false])
}

// checkKey reads a key: a key set, or an InvalidPublicKeyError, never anything else.
func checkKey(data []byte) error {
	set, err := licensing.ParsePublicKey(data)
	if err != nil {
		var invalid *licensing.InvalidPublicKeyError
		if !errors.As(err, &invalid) {
			return fmt.Errorf("refused without InvalidPublicKeyError: %v", err)
		}
		return nil
	}
	if len(set.Keys()) == 0 {
		return errors.New("an accepted key set holds no key")
	}
	for _, k := range set.Keys() {
		want := map[licensing.KeyType]string{licensing.KeyEd25519: "EdDSA", licensing.KeyECDSAP256: "ES256", licensing.KeyRSA: "PS256"}[k.Type]
		if want == "" || k.Alg != want {
			return fmt.Errorf("a key of type %q verifies %q", k.Type, k.Alg)
		}
	}
	return nil
}

// mutate changes a text in one of several ways.
func mutate(rng *rand.Rand, s string) string {
	b := []byte(s)
	switch rng.Intn(11) {
	case 0: // flip one to three bits
		if len(b) == 0 {
			return "\x00"
		}
		for n := 1 + rng.Intn(3); n > 0; n-- {
			b[rng.Intn(len(b))] ^= 1 << rng.Intn(8)
		}
	case 1: // truncate
		if len(b) > 0 {
			b = b[:rng.Intn(len(b))]
		}
	case 2: // cut a range out
		if len(b) > 1 {
			i := rng.Intn(len(b))
			j := i + rng.Intn(len(b)-i)
			b = append(b[:i:i], b[j:]...)
		}
	case 3: // overwrite a range with random bytes
		if len(b) > 0 {
			i := rng.Intn(len(b))
			for n := 1 + rng.Intn(8); n > 0 && i < len(b); n, i = n-1, i+1 {
				b[i] = byte(rng.Intn(256))
			}
		}
	case 4: // insert random bytes
		i := rng.Intn(len(b) + 1)
		extra := make([]byte, 1+rng.Intn(8))
		rng.Read(extra)
		b = append(b[:i:i], append(extra, b[i:]...)...)
	case 5: // entirely random bytes
		b = make([]byte, rng.Intn(64))
		rng.Read(b)
	case 6: // whitespace, JavaScript's or not, somewhere
		spaces := []string{" ", "\t", "\n", "\r\n", "\v", "\f", "\u00a0", "\u1680", "\u2000", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff", "\u001f", "\u0085", "\u200b"}
		w := spaces[rng.Intn(len(spaces))]
		switch rng.Intn(3) {
		case 0:
			return w + s
		case 1:
			return s + w
		default:
			i := rng.Intn(len(s) + 1)
			return s[:i] + w + s[i:]
		}
	case 7: // a segment replaced with random JSON
		return withRandomJSON(rng, s)
	case 8: // a member of the header or payload changed
		return withChangedMember(rng, s)
	case 9: // dots and segments moved around
		segments := strings.Split(s, ".")
		switch rng.Intn(4) {
		case 0:
			rng.Shuffle(len(segments), func(i, j int) { segments[i], segments[j] = segments[j], segments[i] })
		case 1:
			segments = append(segments, segments[rng.Intn(len(segments))])
		case 2:
			segments = segments[:rng.Intn(len(segments)+1)]
		default:
			segments[rng.Intn(len(segments))] = ""
		}
		return strings.Join(segments, ".")
	default: // as a license_blob, perhaps wrapped or unpadded
		blob := base64.StdEncoding.EncodeToString(b)
		switch rng.Intn(3) {
		case 0:
			var wrapped strings.Builder
			for i := 0; i < len(blob); i += 64 {
				end := i + 64
				if end > len(blob) {
					end = len(blob)
				}
				wrapped.WriteString(blob[i:end] + "\n")
			}
			return wrapped.String()
		case 1:
			return strings.TrimRight(blob, "=")
		}
		return blob
	}
	return string(b)
}

// withRandomJSON replaces the header or the payload segment with random JSON.
func withRandomJSON(rng *rand.Rand, s string) string {
	segments := strings.Split(s, ".")
	if len(segments) < 2 {
		return s
	}
	var text string
	if rng.Intn(4) == 0 {
		text = randomJSON(rng, 0)
	} else {
		// An object, most of the time, as a JWS needs.
		text = randomObject(rng, 0)
	}
	segments[rng.Intn(2)] = base64.RawURLEncoding.EncodeToString([]byte(text))
	return strings.Join(segments, ".")
}

// withChangedMember decodes the header or payload, changes one member, and encodes it again.
// The signature stays: the document must not verify, but it must be read.
func withChangedMember(rng *rand.Rand, s string) string {
	segments := strings.Split(s, ".")
	if len(segments) < 2 {
		return s
	}
	which := rng.Intn(2)
	raw, err := base64.RawURLEncoding.DecodeString(segments[which])
	if err != nil {
		return s
	}
	var object map[string]any
	if json.Unmarshal(raw, &object) != nil || object == nil {
		return s
	}
	names := make([]string, 0, len(object))
	for name := range object {
		names = append(names, name)
	}
	sortStrings(names)
	switch {
	case len(names) > 0 && rng.Intn(3) == 0:
		delete(object, names[rng.Intn(len(names))])
	case len(names) > 0 && rng.Intn(2) == 0:
		object[names[rng.Intn(len(names))]] = randomValue(rng, 1)
	default:
		object[randomString(rng)] = randomValue(rng, 1)
	}
	text, err := json.Marshal(object)
	if err != nil {
		return s
	}
	segments[which] = base64.RawURLEncoding.EncodeToString(text)
	return strings.Join(segments, ".")
}

func sortStrings(list []string) { sort.Strings(list) }

// randomValue is a value for encoding/json: numbers at the edges, strings, objects and arrays.
func randomValue(rng *rand.Rand, depth int) any {
	switch n := rng.Intn(10); {
	case n == 0:
		return nil
	case n == 1:
		return rng.Intn(2) == 0
	case n <= 4:
		edges := []float64{0, 1, -1, 2, 0.5, 1803902400, 1803902400.5, 8.64e12, 8.64e12 + 1, -8.64e12,
			math.MaxInt32, 1 << 53, 1<<53 - 1, -(1<<53 - 1), 1e300, math.SmallestNonzeroFloat64}
		return edges[rng.Intn(len(edges))]
	case n <= 7:
		return randomString(rng)
	case n == 8 && depth < 4:
		list := make([]any, rng.Intn(4))
		for i := range list {
			list[i] = randomValue(rng, depth+1)
		}
		return list
	case depth < 4:
		object := map[string]any{}
		for i := rng.Intn(4); i > 0; i-- {
			object[randomString(rng)] = randomValue(rng, depth+1)
		}
		return object
	}
	return "deep"
}

func randomString(rng *rand.Rand) string {
	words := []string{"", "typ", "alg", "kid", "crit", "v", "exp", "nbf", "iat", "sub", "product_id",
		"license+jwt", "activation+jwt", "licensing-revocation-list+jwt", "licensing-revocation-delta+jwt",
		"licensing-answer+jws", "EdDSA", "Ed25519", "ES256", "PS256", "none", "HS256", "revoked",
		"2027-03-01T12:00:00.000Z", "+275760-09-13T00:00:00.000Z", "not a date", "é", "\U0001F600", "\u2028"}
	return words[rng.Intn(len(words))]
}

// randomJSON is JSON text, sometimes with what encoding/json never writes: huge numbers,
// escapes, lone surrogates, duplicate members, deep nesting, or a mistake.
func randomJSON(rng *rand.Rand, depth int) string {
	switch rng.Intn(12) {
	case 0:
		return []string{"1e400", "-0", "1803816000.0", "3e0", "0.1e1", "-1e-400", "NaN", "Infinity", "01", "1.", ".5", "-"}[rng.Intn(12)]
	case 1:
		return []string{`"\ud800"`, `"\udc00\ud800"`, `"\ud83d\ude00"`, `"\u0000"`, `"\/"`, `"\x"`, `"` + "\x01" + `"`, `"unterminated`}[rng.Intn(8)]
	case 2:
		return strings.Repeat("[", 1+rng.Intn(5000)) + strings.Repeat("]", rng.Intn(5000))
	case 3:
		return "\ufeff{}"
	case 4:
		return randomObject(rng, depth+1)
	default:
		v, _ := json.Marshal(randomValue(rng, depth))
		return string(v)
	}
}

func randomObject(rng *rand.Rand, depth int) string {
	var members []string
	for i := rng.Intn(6); i > 0; i-- {
		name, _ := json.Marshal(randomString(rng))
		value := randomJSON(rng, depth+1)
		if depth > 2 {
			value = "1"
		}
		members = append(members, string(name)+":"+value)
	}
	if len(members) > 0 && rng.Intn(4) == 0 {
		members = append(members, members[0]) // a member twice
	}
	return "{" + strings.Join(members, ",") + "}"
}

// The native fuzz targets: `go test` runs their seeds (every vector's document), and
// `go test -fuzz FuzzVerifyLicense` (one target at a time) searches further.

func fuzzTarget(f *testing.F, kind string) {
	cases, _ := fuzzCases(f)
	var mine []fuzzCase
	for _, c := range cases {
		if c.kind == kind {
			mine = append(mine, c)
			f.Add(uint16(len(mine)-1), c.text, c.body)
		}
	}
	f.Fuzz(func(t *testing.T, which uint16, text, body string) {
		c := mine[int(which)%len(mine)]
		v, err := c.run(text, body)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.check(v); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzVerifyLicense(f *testing.F)        { fuzzTarget(f, "license") }
func FuzzVerifyRevocationList(f *testing.F) { fuzzTarget(f, "revocation-list") }
func FuzzVerifySignedAnswer(f *testing.F)   { fuzzTarget(f, "signed-answer") }
func FuzzVerifyActivationFile(f *testing.F) { fuzzTarget(f, "activation") }

func FuzzParsePublicKey(f *testing.F) {
	_, keyTexts := fuzzCases(f)
	for _, text := range keyTexts {
		f.Add([]byte(text))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := checkKey(data); err != nil {
			t.Fatal(err)
		}
	})
}
