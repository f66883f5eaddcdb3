package licensing

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// parseJSON reads JSON (RFC 8259) the way JavaScript's JSON.parse reads it.
//
// The values are nil, bool, float64, string, []any and map[string]any.
// When a member appears twice, the last one counts.
// Numbers are IEEE 754 doubles: a number too large for one is an infinity, as in JavaScript.
// A string may hold a lone surrogate (an escape such as \ud800): it is kept as its three-byte
// form, so that it never equals a string without it.
// Only space, tab, line feed and carriage return are whitespace; a byte order mark is not JSON.
// The parser keeps its own stack, so deep nesting never exhausts Go's.
// The bytes must be UTF-8: the caller checks that first.
func parseJSON(data []byte) (any, bool) {
	p := jsonParser{s: data}
	type frame struct {
		object map[string]any
		array  []any
		key    string
	}
	var stack []*frame
	for {
		// Read one value. An object or array that is not empty opens a frame instead.
		p.skipSpace()
		if p.i >= len(p.s) {
			return nil, false
		}
		var value any
		switch c := p.s[p.i]; {
		case c == '{':
			p.i++
			p.skipSpace()
			if p.peek('}') {
				p.i++
				value = map[string]any{}
				break
			}
			key, ok := p.memberName()
			if !ok {
				return nil, false
			}
			stack = append(stack, &frame{object: map[string]any{}, key: key})
			continue
		case c == '[':
			p.i++
			p.skipSpace()
			if p.peek(']') {
				p.i++
				value = []any{}
				break
			}
			stack = append(stack, &frame{array: []any{}})
			continue
		case c == '"':
			s, ok := p.string()
			if !ok {
				return nil, false
			}
			value = s
		case c == 't':
			if !p.literal("true") {
				return nil, false
			}
			value = true
		case c == 'f':
			if !p.literal("false") {
				return nil, false
			}
			value = false
		case c == 'n':
			if !p.literal("null") {
				return nil, false
			}
			value = nil
		default:
			n, ok := p.number()
			if !ok {
				return nil, false
			}
			value = n
		}

		// Hand the value to the frames it completes.
		for {
			if len(stack) == 0 {
				p.skipSpace()
				return value, p.i == len(p.s)
			}
			top := stack[len(stack)-1]
			if top.object != nil {
				top.object[top.key] = value
			} else {
				top.array = append(top.array, value)
			}
			p.skipSpace()
			if p.i >= len(p.s) {
				return nil, false
			}
			c := p.s[p.i]
			if c == ',' {
				p.i++
				if top.object != nil {
					p.skipSpace()
					key, ok := p.memberName()
					if !ok {
						return nil, false
					}
					top.key = key
				}
				break
			}
			if top.object != nil && c == '}' {
				value = top.object
			} else if top.object == nil && c == ']' {
				value = top.array
			} else {
				return nil, false
			}
			p.i++
			stack = stack[:len(stack)-1]
		}
	}
}

type jsonParser struct {
	s []byte
	i int
}

func (p *jsonParser) skipSpace() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) peek(c byte) bool {
	return p.i < len(p.s) && p.s[p.i] == c
}

func (p *jsonParser) literal(word string) bool {
	if len(p.s)-p.i < len(word) || string(p.s[p.i:p.i+len(word)]) != word {
		return false
	}
	p.i += len(word)
	return true
}

// memberName reads a member's name and the colon after it.
func (p *jsonParser) memberName() (string, bool) {
	if !p.peek('"') {
		return "", false
	}
	key, ok := p.string()
	if !ok {
		return "", false
	}
	p.skipSpace()
	if !p.peek(':') {
		return "", false
	}
	p.i++
	return key, true
}

func (p *jsonParser) string() (string, bool) {
	p.i++ // the opening quote
	var out []byte
	start := p.i
	for {
		if p.i >= len(p.s) {
			return "", false
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			out = append(out, p.s[start:p.i]...)
			p.i++
			return string(out), true
		case c < 0x20:
			return "", false
		case c == '\\':
			out = append(out, p.s[start:p.i]...)
			p.i++
			if p.i >= len(p.s) {
				return "", false
			}
			e := p.s[p.i]
			p.i++
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				unit, ok := p.hex4()
				if !ok {
					return "", false
				}
				out = p.appendUnit(out, unit)
			default:
				return "", false
			}
			start = p.i
		default:
			p.i++
		}
	}
}

// appendUnit appends the character of a \u escape.
// A high surrogate followed by an escaped low surrogate is one character.
// A surrogate on its own is written in its three-byte form (see utf16Units).
func (p *jsonParser) appendUnit(out []byte, unit rune) []byte {
	if unit >= 0xd800 && unit <= 0xdbff && p.i+6 <= len(p.s) && p.s[p.i] == '\\' && p.s[p.i+1] == 'u' {
		save := p.i
		p.i += 2
		low, ok := p.hex4()
		if ok && low >= 0xdc00 && low <= 0xdfff {
			return utf8.AppendRune(out, 0x10000+(unit-0xd800)<<10+(low-0xdc00))
		}
		p.i = save
	}
	if unit >= 0xd800 && unit <= 0xdfff {
		return append(out, 0xed, byte(0x80|(unit>>6)&0x3f), byte(0x80|unit&0x3f))
	}
	return utf8.AppendRune(out, unit)
}

func (p *jsonParser) hex4() (rune, bool) {
	if len(p.s)-p.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p.s[p.i : p.i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? as the nearest double.
func (p *jsonParser) number() (float64, bool) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.peek('-') {
		p.i++
	}
	if p.peek('0') {
		p.i++
	} else if digits() == 0 {
		return 0, false
	}
	if p.peek('.') {
		p.i++
		if digits() == 0 {
			return 0, false
		}
	}
	if p.peek('e') || p.peek('E') {
		p.i++
		if p.peek('+') || p.peek('-') {
			p.i++
		}
		if digits() == 0 {
			return 0, false
		}
	}
	// An out-of-range error still gives the value JavaScript gives: an infinity, or zero.
	f, err := strconv.ParseFloat(string(p.s[start:p.i]), 64)
	if err != nil && !(math.IsInf(f, 0) || f == 0) {
		return 0, false
	}
	return f, true
}

// jsonObject decodes a base64url segment that holds a JSON object.
func jsonObject(segment string) (map[string]any, bool) {
	bytes, ok := fromBase64URL(segment)
	if !ok || !utf8.Valid(bytes) {
		return nil, false
	}
	value, ok := parseJSON(bytes)
	if !ok {
		return nil, false
	}
	object, ok := value.(map[string]any)
	return object, ok
}

// copyJSONObject copies a decoded JSON object, and every object and array inside it.
func copyJSONObject(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyJSONValue(v)
	}
	return out
}

func copyJSONValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return copyJSONObject(v)
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			out[i] = copyJSONValue(item)
		}
		return out
	}
	return v
}

// marshalJSONValue writes a decoded JSON value as JavaScript's JSON.stringify does for numbers:
// an infinity is null and -0 is 0.
func marshalJSONValue(v any) ([]byte, error) {
	return json.Marshal(stringifiable(v))
}

func stringifiable(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, item := range v {
			out[k] = stringifiable(item)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			out[i] = stringifiable(item)
		}
		return out
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil
		}
		if v == 0 {
			return float64(0)
		}
	}
	return v
}
