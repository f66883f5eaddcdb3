package licensing_test

// The Go SDK's verdicts on mutated documents and keys, written for a comparison with the
// JavaScript SDK (sdks/go/go-sdk.int-spec.ts reads the file and runs the same inputs).
// It runs only when LICENSING_COMPARE_DUMP names the file to write.
// LICENSING_COMPARE_COUNT sets how many documents and how many keys (default 3000 each).

import (
	"encoding/json"
	"errors"
	"math/rand"
	"os"
	"strconv"
	"testing"

	licensing "github.com/licensing-platform/licensing/sdks/go/licensing"
)

const compareSeed = 8128

type comparedDocument struct {
	Kind    string          `json:"kind"`
	File    string          `json:"file"`
	Key     string          `json:"key"`
	Vector  string          `json:"vector"`
	Text    []byte          `json:"text_base64"`
	Body    []byte          `json:"body_base64"`
	Nonce   string          `json:"nonce"`
	Options options         `json:"options"`
	Verdict json.RawMessage `json:"verdict"`
}

type comparedKey struct {
	Text     []byte                `json:"text_base64"`
	Accepted bool                  `json:"accepted"`
	Reason   string                `json:"reason,omitempty"`
	Keys     []licensing.PublicKey `json:"keys,omitempty"`
}

func TestDumpForComparison(t *testing.T) {
	path := os.Getenv("LICENSING_COMPARE_DUMP")
	if path == "" {
		t.Skip("LICENSING_COMPARE_DUMP is not set")
	}
	count := 3000
	if s := os.Getenv("LICENSING_COMPARE_COUNT"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			t.Fatalf("LICENSING_COMPARE_COUNT=%q is not a count", s)
		}
		count = n
	}
	cases, keyTexts := fuzzCases(t)
	origins := map[string][2]string{}
	for _, nf := range readVectorFiles(t) {
		for _, v := range nf.file.Vectors {
			origins[nf.name+" "+v.ID] = [2]string{nf.name, v.Key}
		}
	}
	rng := rand.New(rand.NewSource(compareSeed))
	out := struct {
		Documents []comparedDocument `json:"documents"`
		Keys      []comparedKey      `json:"keys"`
	}{}
	for i := 0; i < count; i++ {
		c := cases[rng.Intn(len(cases))]
		text, body := c.text, c.body
		if c.kind == "signed-answer" && rng.Intn(3) == 0 {
			body = mutate(rng, body)
		} else {
			text = mutate(rng, text)
		}
		v, err := c.run(text, body)
		if err != nil {
			t.Fatal(err)
		}
		origin := origins[c.id]
		out.Documents = append(out.Documents, comparedDocument{
			Kind: c.kind, File: origin[0], Key: origin[1], Vector: c.id,
			Text: []byte(text), Body: []byte(body), Nonce: c.nonce, Options: c.options, Verdict: v.json,
		})
	}
	for i := 0; i < count; i++ {
		text := mutate(rng, keyTexts[rng.Intn(len(keyTexts))])
		set, err := licensing.ParsePublicKey([]byte(text))
		key := comparedKey{Text: []byte(text), Accepted: err == nil}
		var invalid *licensing.InvalidPublicKeyError
		if errors.As(err, &invalid) {
			key.Reason = invalid.Reason
		} else if err != nil {
			t.Fatal(err)
		} else {
			key.Keys = set.Keys()
		}
		out.Keys = append(out.Keys, key)
	}
	data, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
