package licensing

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// isSpace reports whether r is whitespace as JavaScript's String.prototype.trim sees it.
// That is tab, line feed, vertical tab, form feed, carriage return, space, U+00A0, U+1680,
// U+2000 to U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 and U+FEFF.
// Nothing else is whitespace: not U+001F, not U+0085.
func isSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x00a0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// trimSpace removes whitespace (isSpace) from both ends of s.
func trimSpace(s string) string {
	return strings.TrimFunc(s, isSpace)
}

// removeSpace removes every whitespace character (isSpace) from s.
func removeSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if isSpace(r) {
			return -1
		}
		return r
	}, s)
}

// fromBase64URL decodes canonical unpadded base64url.
// Only A-Z, a-z, 0-9, "-" and "_" may appear.
// A length of 4n + 1 is refused, and so are padding bits that are not zero.
// The empty text decodes to no bytes.
func fromBase64URL(s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return nil, false
		}
	}
	if len(s)%4 == 1 {
		return nil, false
	}
	// Strict mode refuses padding bits that are not zero.
	// The alphabet check above keeps out the line breaks the decoder would skip.
	out, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, false
	}
	return out, true
}

// fromBase64 decodes canonical padded standard base64.
// The text holds groups of four characters of A-Z, a-z, 0-9, "+" and "/".
// The last group may end with "=" or "==".
// Padding bits must be zero, and the empty text is refused.
func fromBase64(s string) ([]byte, bool) {
	if len(s) == 0 || len(s)%4 != 0 {
		return nil, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' {
			continue
		}
		// "=" may only be the last character, or the last two.
		if c == '=' && (i == len(s)-1 || i == len(s)-2 && s[len(s)-1] == '=') {
			continue
		}
		return nil, false
	}
	out, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, false
	}
	return out, true
}

// base64URL encodes bytes as unpadded base64url.
func base64URL(b []byte) string {
	return base64.RawURLEncoding.EncodeToString(b)
}

// utf16Units returns the UTF-16 code units of s.
// Strings read from JSON may hold a lone surrogate (an escape such as \ud800).
// Such a surrogate is kept as its three-byte form ED A0 80 to ED BF BF, and read back here.
func utf16Units(s string) []uint16 {
	units := make([]uint16, 0, len(s))
	for i := 0; i < len(s); {
		if i+2 < len(s) && s[i] == 0xed && s[i+1] >= 0xa0 && s[i+1] <= 0xbf && s[i+2] >= 0x80 && s[i+2] <= 0xbf {
			units = append(units, 0xd000|uint16(s[i+1]&0x3f)<<6|uint16(s[i+2]&0x3f))
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r >= 0x10000 {
			r -= 0x10000
			units = append(units, 0xd800|uint16(r>>10), 0xdc00|uint16(r&0x3ff))
		} else {
			units = append(units, uint16(r))
		}
	}
	return units
}

// compareUTF16 orders two strings as JavaScript's < does: by UTF-16 code units.
// It differs from Go's byte order for characters above U+FFFF.
func compareUTF16(a, b string) int {
	if isASCII(a) && isASCII(b) {
		return strings.Compare(a, b)
	}
	ua, ub := utf16Units(a), utf16Units(b)
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			if ua[i] < ub[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(ua) < len(ub):
		return -1
	case len(ua) > len(ub):
		return 1
	}
	return 0
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
