package licensing_test

// The Go SDK runs every committed conformance vector and must answer exactly the expected
// verdict: valid or not, the same error codes in the same order, and the same decoded document.
// The vectors are the JSON files of sdks/conformance; its README says what they hold.

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	licensing "github.com/licensing-platform/licensing/sdks/go/licensing"
)

// conformanceDir holds the vector files, relative to this package.
const conformanceDir = "../../conformance"

type vectorFile struct {
	Kind        string                                `json:"kind"`
	Description string                                `json:"description"`
	Keys        map[string]map[string]json.RawMessage `json:"keys"`
	Vectors     []vector                              `json:"vectors"`
}

type vector struct {
	ID          string                     `json:"id"`
	Description string                     `json:"description"`
	Key         string                     `json:"key"`
	Input       json.RawMessage            `json:"input"`
	Options     map[string]json.RawMessage `json:"options"`
	Expected    json.RawMessage            `json:"expected"`
}

// The options each kind of vector may set: an unknown one would otherwise be silently ignored.
var knownOptions = map[string][]string{
	"license":         {"now", "product_id", "fingerprint", "clock_tolerance_seconds"},
	"revocation-list": {"product_id", "previous"},
	"signed-answer":   {"now", "max_age_seconds", "clock_tolerance_seconds"},
	"activation":      {"now", "nonce", "machine_key", "fingerprint", "product_id", "clock_tolerance_seconds"},
	"public-key":      {},
}

type namedFile struct {
	name string
	file vectorFile
}

// readVectorFiles reads every vector file, sorted by name.
func readVectorFiles(t testing.TB) []namedFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(conformanceDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no vector files in %s", conformanceDir)
	}
	sort.Strings(paths)
	var files []namedFile
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var file vectorFile
		if err := json.Unmarshal(data, &file); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		files = append(files, namedFile{name: filepath.Base(path), file: file})
	}
	return files
}

func TestConformanceVectors(t *testing.T) {
	total := 0
	for _, nf := range readVectorFiles(t) {
		nf := nf
		known, ok := knownOptions[nf.file.Kind]
		if !ok {
			t.Errorf("%s: unknown kind %q", nf.name, nf.file.Kind)
			continue
		}
		if len(nf.file.Vectors) == 0 {
			t.Errorf("%s: no vectors", nf.name)
		}
		passed := 0
		t.Run(nf.name, func(t *testing.T) {
			for _, v := range nf.file.Vectors {
				v := v
				ok := t.Run(v.ID, func(t *testing.T) {
					if _, ok := nf.file.Keys[v.Key]; !ok {
						t.Fatalf("the vector names key %q, which the file does not define", v.Key)
					}
					for option := range v.Options {
						if !contains(known, option) {
							t.Fatalf("unknown option %q for kind %s", option, nf.file.Kind)
						}
					}
					actual, err := runVector(nf.file, v)
					if err != nil {
						t.Fatal(err)
					}
					var expected any
					if err := json.Unmarshal(v.Expected, &expected); err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(actual, expected) {
						got, _ := json.MarshalIndent(actual, "", "  ")
						want, _ := json.MarshalIndent(expected, "", "  ")
						t.Errorf("%s\n got: %s\nwant: %s", v.Description, got, want)
					}
				})
				if ok {
					passed++
				}
			}
		})
		t.Logf("%s (%s): %d of %d vectors pass", nf.name, nf.file.Kind, passed, len(nf.file.Vectors))
		total += passed
	}
	t.Logf("all files: %d vectors pass", total)
}

func contains(list []string, s string) bool {
	for _, item := range list {
		if item == s {
			return true
		}
	}
	return false
}

// keyOf imports a key entry of a file: exactly one of pem, jwk or jwks.
func keyOf(file vectorFile, name string) (*licensing.KeySet, error) {
	entry := file.Keys[name]
	if len(entry) != 1 {
		return nil, fmt.Errorf("key %q: expected exactly one of pem, jwk, jwks", name)
	}
	if raw, ok := entry["pem"]; ok {
		var pem string
		if err := json.Unmarshal(raw, &pem); err != nil {
			return nil, err
		}
		return licensing.ParsePublicKeyPEM(pem)
	}
	if raw, ok := entry["jwk"]; ok {
		return licensing.ParsePublicKeyJSON(raw)
	}
	if raw, ok := entry["jwks"]; ok {
		return licensing.ParsePublicKeyJSON(raw)
	}
	return nil, fmt.Errorf("key %q: expected pem, jwk or jwks", name)
}

// options reads a vector's options.
type options map[string]json.RawMessage

func (o options) has(name string) bool {
	_, ok := o[name]
	return ok
}

func (o options) str(name string) string {
	var s string
	if raw, ok := o[name]; ok {
		mustUnmarshal(raw, &s)
	}
	return s
}

func (o options) seconds(name string) float64 {
	var f float64
	if raw, ok := o[name]; ok {
		mustUnmarshal(raw, &f)
	}
	return f
}

func (o options) now() time.Time {
	if !o.has("now") {
		return time.Time{}
	}
	return time.UnixMilli(int64(o.seconds("now") * 1000))
}

func (o options) duration(name string) time.Duration {
	return time.Duration(o.seconds(name) * float64(time.Second))
}

func mustUnmarshal(raw json.RawMessage, into any) {
	if err := json.Unmarshal(raw, into); err != nil {
		panic(err)
	}
}

func codesOf(errs []licensing.VerifyError) []string {
	codes := []string{}
	for _, e := range errs {
		codes = append(codes, string(e.Code))
	}
	return codes
}

// runVector answers what the SDK says of a vector, in the form of its expected member.
func runVector(file vectorFile, v vector) (any, error) {
	keys, keyErr := keyOf(file, v.Key)
	o := options(v.Options)
	if file.Kind == "public-key" {
		var invalid *licensing.InvalidPublicKeyError
		if keyErr != nil {
			if !errors.As(keyErr, &invalid) {
				return nil, fmt.Errorf("the key was refused without InvalidPublicKeyError: %w", keyErr)
			}
			return roundTrip(map[string]any{"accepted": false})
		}
		return roundTrip(map[string]any{"accepted": true, "keys": keys.Keys()})
	}
	if keyErr != nil {
		return nil, keyErr
	}
	switch file.Kind {
	case "license":
		var input struct {
			Text        *string `json:"text"`
			BytesBase64 *string `json:"bytes_base64"`
		}
		mustUnmarshal(v.Input, &input)
		var data []byte
		switch {
		case input.Text != nil:
			data = []byte(*input.Text)
		case input.BytesBase64 != nil:
			decoded, err := base64.StdEncoding.DecodeString(*input.BytesBase64)
			if err != nil {
				return nil, err
			}
			data = decoded
		default:
			return nil, errors.New("a license vector's input has text or bytes_base64")
		}
		result, err := licensing.VerifyLicense(data, keys, licensing.LicenseOptions{
			Now:            o.now(),
			ProductID:      o.str("product_id"),
			Fingerprint:    o.str("fingerprint"),
			ClockTolerance: o.duration("clock_tolerance_seconds"),
		})
		if err != nil {
			return nil, err
		}
		return roundTrip(map[string]any{"valid": result.Valid, "errors": codesOf(result.Errors), "license": result.License})
	case "revocation-list":
		var input struct {
			Text string `json:"text"`
		}
		mustUnmarshal(v.Input, &input)
		opts := licensing.RevocationListOptions{ProductID: o.str("product_id")}
		if o.has("previous") {
			opts.Previous = &licensing.RevocationList{}
			mustUnmarshal(o["previous"], opts.Previous)
		}
		result, err := licensing.VerifyRevocationList(input.Text, keys, opts)
		if err != nil {
			return nil, err
		}
		return roundTrip(map[string]any{"valid": result.Valid, "errors": codesOf(result.Errors), "list": result.List})
	case "signed-answer":
		var input struct {
			Body      string  `json:"body"`
			Signature *string `json:"signature"`
			Nonce     string  `json:"nonce"`
		}
		mustUnmarshal(v.Input, &input)
		answer := licensing.SignedAnswer{Body: []byte(input.Body), Nonce: input.Nonce}
		if input.Signature != nil {
			answer.Signature = *input.Signature
		}
		opts := licensing.SignedAnswerOptions{Now: o.now()}
		if o.has("max_age_seconds") {
			opts.MaxAge = licensing.Seconds(o.seconds("max_age_seconds"))
		}
		if o.has("clock_tolerance_seconds") {
			opts.ClockTolerance = licensing.Seconds(o.seconds("clock_tolerance_seconds"))
		}
		result, err := licensing.VerifySignedAnswer(answer, keys, opts)
		if err != nil {
			return nil, err
		}
		return roundTrip(map[string]any{"valid": result.Valid, "errors": codesOf(result.Errors), "signed_at": result.SignedAt})
	case "activation":
		var input struct {
			Text string `json:"text"`
		}
		mustUnmarshal(v.Input, &input)
		opts := licensing.ActivationOptions{
			Now:            o.now(),
			Nonce:          o.str("nonce"),
			Fingerprint:    o.str("fingerprint"),
			ProductID:      o.str("product_id"),
			ClockTolerance: o.duration("clock_tolerance_seconds"),
		}
		if o.has("machine_key") {
			mustUnmarshal(o["machine_key"], &opts.MachineKey)
		}
		result, err := licensing.VerifyActivationFile(input.Text, keys, opts)
		if err != nil {
			return nil, err
		}
		return roundTrip(map[string]any{"valid": result.Valid, "errors": codesOf(result.Errors), "activation": result.Activation})
	}
	return nil, fmt.Errorf("unknown kind %q", file.Kind)
}

// roundTrip turns a value into what encoding/json decodes its JSON to, to compare with a vector.
func roundTrip(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(data, &out)
	return out, err
}

// Sanity: the vector files exist where this test looks, and none was skipped silently.
func TestVectorFilesAreRead(t *testing.T) {
	files := readVectorFiles(t)
	kinds := map[string]int{}
	for _, nf := range files {
		kinds[nf.file.Kind] += len(nf.file.Vectors)
	}
	for kind := range knownOptions {
		if kinds[kind] == 0 {
			t.Errorf("no vectors of kind %s", kind)
		}
	}
	if !strings.HasSuffix(filepath.ToSlash(conformanceDir), "conformance") {
		t.Fatal("unexpected vector directory")
	}
}
