package licensing

import (
	"math"
	"testing"
)

// What JavaScript's Date.parse (V8) answers for these texts, in milliseconds; NaN: not a date.
// Texts JavaScript reads but the platform never writes ("Feb 20 2027", "2027/02/20") are left out.
var dateParseCases = []struct {
	text string
	ms   float64
}{
	{"2027-03-01T12:00:00.000Z", 1803902400000},
	{"2027-02-30T00:00:00Z", 1803945600000},
	{"2027-02-31", 1804032000000},
	{"2027-02-32", math.NaN()},
	{"2027-03-01T24:00:00Z", 1803945600000},
	{"2027-03-01T24:00:01Z", math.NaN()},
	{"2027-03-01T24:00:00.001Z", math.NaN()},
	{"2027-03-01T12:00:00.1234567Z", 1803902400123},
	{"2027-03-01T12:00:00.5Z", 1803902400500},
	{"2027-03-01T12:00Z", 1803902400000},
	{"2027-03-01T12Z", math.NaN()},
	{"+002027-03-01T00:00:00Z", 1803859200000},
	{"-000000-01-01T00:00:00Z", math.NaN()},
	{"+010000-01-01T00:00:00.000Z", 253402300800000},
	{"0000-01-01T00:00:00Z", -62167219200000},
	{"-000001-01-01T00:00:00Z", -62198755200000},
	{"-002027-03-01T00:00:00Z", -126128016000000},
	{"2027", 1798761600000},
	{"2027-03", 1803859200000},
	{"2027-03-01", 1803859200000},
	{"2027-03-01Z", 1803859200000},
	{"2027T12:00Z", 1798804800000},
	{"2027-03T12:00Z", 1803902400000},
	{"2027-03-01T12:00:00+01:00", 1803898800000},
	{"2027-03-01T12:00:00.000+23:59", 1803816060000},
	{"2027-03-01T12:00:00.000-23:59", 1803988740000},
	{"2027-03-01T12:00:00.000+24:00", math.NaN()},
	{"2027-03-01T12:00:00.000+00:60", math.NaN()},
	{"2027-03-01T12:00:00.000+01", math.NaN()},
	{"2027-03-01T12:00:00.Z", math.NaN()},
	{"2027-03-01T12:60:00Z", math.NaN()},
	{"2027-03-01T23:59:60Z", math.NaN()},
	{"2027-03-01T12:00:00,5Z", math.NaN()},
	{"2027-03-01T1:00:00Z", math.NaN()},
	{"2027-03-01T12:00:00.000ZZ", math.NaN()},
	{"2027-13-01", math.NaN()},
	{"2027-00-01", math.NaN()},
	{"2027-03-00", math.NaN()},
	{" 2027-03-01T12:00:00Z", math.NaN()},
	{"2027-03-01T12:00:00Z ", math.NaN()},
	{"20270301", math.NaN()},
	{"-271821-04-20T00:00:00Z", -8.64e15},
	{"-271821-04-19T23:59:59.999Z", math.NaN()},
	{"+275760-09-13T00:00:00.000Z", 8.64e15},
	{"+275760-09-13T00:00:00.001Z", math.NaN()},
	{"yesterday", math.NaN()},
	{"not a date", math.NaN()},
	{"", math.NaN()},
}

func TestParseDateAsJavaScript(t *testing.T) {
	for _, c := range dateParseCases {
		ms, ok := parseDate(c.text)
		if math.IsNaN(c.ms) {
			if ok {
				t.Errorf("parseDate(%q) = %d, want no date", c.text, ms)
			}
			continue
		}
		if !ok || float64(ms) != c.ms {
			t.Errorf("parseDate(%q) = %d, %v; want %.0f", c.text, ms, ok, c.ms)
		}
	}
}

// What JavaScript's Date#toISOString writes.
func TestISOAsJavaScript(t *testing.T) {
	for _, c := range []struct {
		ms   int64
		want string
	}{
		{0, "1970-01-01T00:00:00.000Z"},
		{1803902400000, "2027-03-01T12:00:00.000Z"},
		{-14182940000, "1969-07-20T20:17:40.000Z"},
		{-1, "1969-12-31T23:59:59.999Z"},
		{253402300800000, "+010000-01-01T00:00:00.000Z"},
		{253402300799999, "9999-12-31T23:59:59.999Z"},
		{-62167219200000, "0000-01-01T00:00:00.000Z"},
		{-62167219200001, "-000001-12-31T23:59:59.999Z"},
		{8.64e15, "+275760-09-13T00:00:00.000Z"},
		{-8.64e15, "-271821-04-20T00:00:00.000Z"},
		{951782400000, "2000-02-29T00:00:00.000Z"},
	} {
		if got := isoOfMillis(c.ms); got != c.want {
			t.Errorf("isoOfMillis(%d) = %s, want %s", c.ms, got, c.want)
		}
	}
	// A fraction of a millisecond is cut toward zero, on both sides of 1970.
	for seconds, want := range map[float64]string{
		-0.0005:         "1970-01-01T00:00:00.000Z",
		0.0005:          "1970-01-01T00:00:00.000Z",
		-0.0015:         "1969-12-31T23:59:59.999Z",
		1803902400.9999: "2027-03-01T12:00:00.999Z",
	} {
		if got := isoOfSeconds(seconds); got != want {
			t.Errorf("isoOfSeconds(%v) = %s, want %s", seconds, got, want)
		}
	}
}

func TestDaysRoundTrip(t *testing.T) {
	for days := int64(-100_000_000); days <= 100_000_000; days += 9_973 {
		y, m, d := civilOfDays(days)
		if back := daysOfCivil(y, m, d); back != days {
			t.Fatalf("days %d -> %d-%d-%d -> %d", days, y, m, d, back)
		}
	}
}

// JSON as JavaScript's JSON.parse reads it.
func TestParseJSONAsJavaScript(t *testing.T) {
	accepted := map[string]any{
		`{"a":1,"a":2}`:            map[string]any{"a": float64(2)},
		`1e400`:                    math.Inf(1),
		`-1e400`:                   math.Inf(-1),
		`1e-400`:                   float64(0),
		`1803816000.0`:             float64(1803816000),
		` [ ] `:                    []any{},
		`"\ud83d\ude00"`:           "\U0001F600",
		`"\u00e9\/\b\f\n\r\t"`:     "é/\b\f\n\r\t",
		`{"__proto__":{"x":true}}`: map[string]any{"__proto__": map[string]any{"x": true}},
	}
	for text, want := range accepted {
		got, ok := parseJSON([]byte(text))
		if !ok || !jsonEqual(got, want) {
			t.Errorf("parseJSON(%s) = %#v, %v; want %#v", text, got, ok, want)
		}
	}
	for _, text := range []string{"", "NaN", "Infinity", "\ufeff{}", "01", "1.", ".5", "-", "+1", "{,}", `{"a":1,}`,
		"[1,]", `{"a"}`, `{"a" 1}`, "tru", "nul", `"\x"`, "\"\x01\"", `"abc`, "{}{}", "\v1", "'a'"} {
		if got, ok := parseJSON([]byte(text)); ok {
			t.Errorf("parseJSON(%q) = %#v, want refused", text, got)
		}
	}
	// A lone surrogate is kept apart from U+FFFD, and sorts as JavaScript sorts it.
	lone, _ := parseJSON([]byte(`"\ud800"`))
	if lone == "\ufffd" || compareUTF16(lone.(string), "\uffff") >= 0 || compareUTF16("\U0001F600", "\uffff") >= 0 {
		t.Errorf("a lone surrogate or an astral character does not sort by UTF-16 code units")
	}
	// Nesting deeper than any stack would hold is read all the same.
	deep := make([]byte, 0, 2_000_000)
	for i := 0; i < 1_000_000; i++ {
		deep = append(deep, '[')
	}
	for i := 0; i < 1_000_000; i++ {
		deep = append(deep, ']')
	}
	if _, ok := parseJSON(deep); !ok {
		t.Error("deep nesting refused")
	}
}

func jsonEqual(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, v := range a {
			if !jsonEqual(v, bm[k]) {
				return false
			}
		}
		return true
	case []any:
		bl, ok := b.([]any)
		if !ok || len(a) != len(bl) {
			return false
		}
		for i := range a {
			if !jsonEqual(a[i], bl[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// Canonical base64 and base64url, and JavaScript's whitespace.
func TestEncodingsAndWhitespace(t *testing.T) {
	for text, ok := range map[string]bool{"": true, "AA": true, "AB": false, "AAA": true, "AAB": false, "A": false,
		"AA==": false, "A+": false, "A/": false, "-_-_": true, "AA\n": false} {
		if _, got := fromBase64URL(text); got != ok {
			t.Errorf("fromBase64URL(%q) ok = %v, want %v", text, got, ok)
		}
	}
	for text, ok := range map[string]bool{"": false, "AA==": true, "AB==": false, "AAA=": true, "AAB=": false, "AA": false,
		"AA=": false, "A===": false, "AAAA": true, "+/+/": true, "-_-_": false, "AA==AAAA": false, "AA\n==": false} {
		if _, got := fromBase64(text); got != ok {
			t.Errorf("fromBase64(%q) ok = %v, want %v", text, got, ok)
		}
	}
	if got := trimSpace("\ufeff\u00a0\u2028 x\u001f\u0085 \u3000\u205f\u200a\t"); got != "x\u001f\u0085" {
		t.Errorf("trimSpace kept %q", got)
	}
}
