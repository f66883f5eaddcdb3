package licensing

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"fmt"
	"math/big"
	"strings"
	"unicode/utf8"
)

// KeyType is the kind of a public key: one of the three the platform signs with.
type KeyType string

const (
	KeyEd25519   KeyType = "ed25519"
	KeyECDSAP256 KeyType = "ecdsa-p256"
	KeyRSA       KeyType = "rsa"
)

// The one JWS algorithm each key type verifies.
// "Ed25519" is accepted as another name for EdDSA.
var algOf = map[KeyType]string{
	KeyEd25519:   "EdDSA",
	KeyECDSAP256: "ES256",
	KeyRSA:       "PS256",
}

// Weaker RSA keys are refused, as the licensing service refuses them.
const minRSAModulusBits = 2048

// PublicKey is one imported public key.
type PublicKey struct {
	// Type is ed25519, ecdsa-p256 or rsa.
	Type KeyType `json:"type"`
	// Alg is the one JWS algorithm the key verifies: EdDSA, ES256 or PS256.
	Alg string `json:"alg"`
	// KeyID is the JWK's kid, or nil when the key has none (a PEM never has one).
	KeyID *string `json:"kid"`

	key any // ed25519.PublicKey, *ecdsa.PublicKey or *rsa.PublicKey
}

// KeySet is the keys a document may be verified with: one key, or several (key rotation).
// Import it once and use it for many documents; it is safe for concurrent use.
type KeySet struct {
	keys []PublicKey
}

// Keys returns the set's keys, in the order they were given.
func (s *KeySet) Keys() []PublicKey {
	return append([]PublicKey(nil), s.keys...)
}

// InvalidPublicKeyError says a key cannot be used.
// It is not a public key, or it is of a kind licenses are never signed with.
// Every verifier refuses such a key before it reads any document.
type InvalidPublicKeyError struct {
	Reason string
}

func (e *InvalidPublicKeyError) Error() string {
	return "licensing: invalid public key: " + e.Reason
}

func refuse(format string, args ...any) error {
	return &InvalidPublicKeyError{Reason: fmt.Sprintf(format, args...)}
}

// ParsePublicKey reads a PEM (SPKI) public key, a JWK or a JWK Set.
// Text that starts with "{" (after whitespace) is read as JSON, and anything else as a PEM.
func ParsePublicKey(data []byte) (*KeySet, error) {
	if strings.HasPrefix(trimSpace(string(data)), "{") {
		return ParsePublicKeyJSON(data)
	}
	return ParsePublicKeyPEM(string(data))
}

// ParsePublicKeyPEM reads a public key in PEM: exactly one "PUBLIC KEY" (SPKI) block.
//
// Only whitespace may surround the block.
// Its body is canonical standard base64, in lines.
// The SPKI is read whole: a byte after it is refused.
// The key is Ed25519, EC P-256, or RSA (rsaEncryption) of 2048 bits or more.
// Private keys, certificates and PKCS#1 "RSA PUBLIC KEY" blocks are refused.
func ParsePublicKeyPEM(pem string) (*KeySet, error) {
	key, err := pemKey(pem)
	if err != nil {
		return nil, err
	}
	return &KeySet{keys: []PublicKey{key}}, nil
}

// ParsePublicKeyJSON reads a JWK, or a JWK Set (an object whose "keys" member is an array).
//
// A JWK is refused when it has a private member (d, p, q, dp, dq, qi or k), an alg its key does
// not verify, a use other than "sig", key_ops without "verify", or a kid that is not a string.
// Its key members (x, y, n, e) are canonical unpadded base64url.
// A JWK Set with no keys, or with any refused key, is refused.
func ParsePublicKeyJSON(data []byte) (*KeySet, error) {
	if !utf8.Valid(data) {
		return nil, refuse("the JSON is not UTF-8")
	}
	value, ok := parseJSON(data)
	if !ok {
		return nil, refuse("not JSON")
	}
	object, ok := value.(map[string]any)
	if !ok {
		return nil, refuse("a public key is a PEM text or a JWK object")
	}
	if list, ok := object["keys"].([]any); ok {
		if len(list) == 0 {
			return nil, refuse("the JWK Set holds no keys")
		}
		set := &KeySet{}
		for _, item := range list {
			jwk, ok := item.(map[string]any)
			if !ok {
				return nil, refuse("a JWK is an object")
			}
			key, err := jwkKey(jwk)
			if err != nil {
				return nil, err
			}
			set.keys = append(set.keys, key)
		}
		return set, nil
	}
	key, err := jwkKey(object)
	if err != nil {
		return nil, err
	}
	return &KeySet{keys: []PublicKey{key}}, nil
}

func pemKey(pem string) (PublicKey, error) {
	const begin, end = "-----BEGIN PUBLIC KEY-----", "-----END PUBLIC KEY-----"
	bad := refuse(`expected a single PEM "PUBLIC KEY" (SPKI) block`)
	text := trimSpace(pem)
	if !strings.HasPrefix(text, begin) || !strings.HasSuffix(text, end) || len(text) < len(begin)+len(end) {
		return PublicKey{}, bad
	}
	body := text[len(begin) : len(text)-len(end)]
	// A line break (CR LF or LF) follows the BEGIN line.
	switch {
	case strings.HasPrefix(body, "\r\n"):
		body = body[2:]
	case strings.HasPrefix(body, "\n"):
		body = body[1:]
	default:
		return PublicKey{}, bad
	}
	// The body holds base64 characters and line breaks, at least one character.
	if body == "" {
		return PublicKey{}, bad
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' ||
			c == '+' || c == '/' || c == '=' || c == '\r' || c == '\n') {
			return PublicKey{}, bad
		}
	}
	der, ok := fromBase64(strings.NewReplacer("\r", "", "\n", "").Replace(body))
	if !ok {
		return PublicKey{}, bad
	}
	return spkiKey(der)
}

// DER object identifiers, as their content bytes.
var (
	oidEd25519         = []byte{0x2b, 0x65, 0x70}                                     // 1.3.101.112
	oidECPublicKey     = []byte{0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01}             // 1.2.840.10045.2.1
	oidP256            = []byte{0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07}       // 1.2.840.10045.3.1.7
	oidRSAEncryption   = []byte{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01} // 1.2.840.113549.1.1.1
	errNotSPKI         = refuse("not a DER SubjectPublicKeyInfo")
	errUnsupportedType = refuse("unsupported key type: licenses are signed with Ed25519, P-256 or RSA keys")
)

// spkiKey reads SEQUENCE { SEQUENCE { OID, parameters? }, BIT STRING }.
func spkiKey(der []byte) (PublicKey, error) {
	outer := derReader{b: der}
	spki, ok := outer.read(0x30)
	if !ok || !outer.done() {
		return PublicKey{}, errNotSPKI
	}
	body := derReader{b: spki}
	algorithmBytes, ok := body.read(0x30)
	if !ok {
		return PublicKey{}, errNotSPKI
	}
	algorithm := derReader{b: algorithmBytes}
	oid, ok := algorithm.read(0x06)
	if !ok {
		return PublicKey{}, errNotSPKI
	}
	var parameter *derElement
	if !algorithm.done() {
		p, ok := algorithm.next()
		if !ok {
			return PublicKey{}, errNotSPKI
		}
		parameter = &p
	}
	if !algorithm.done() {
		return PublicKey{}, errNotSPKI
	}

	var keyType KeyType
	switch {
	case bytes.Equal(oid, oidEd25519):
		keyType = KeyEd25519
	case bytes.Equal(oid, oidRSAEncryption):
		keyType = KeyRSA
	case bytes.Equal(oid, oidECPublicKey):
		if parameter == nil || parameter.tag != 0x06 || !bytes.Equal(parameter.value, oidP256) {
			return PublicKey{}, refuse("unsupported EC curve: only P-256 keys sign licenses")
		}
		keyType = KeyECDSAP256
	default:
		return PublicKey{}, errUnsupportedType
	}

	bits, ok := body.read(0x03)
	if !ok || !body.done() || len(bits) < 1 {
		return PublicKey{}, errNotSPKI
	}
	// The first byte counts the unused bits at the end: 0 to 7. As OpenSSL (behind JavaScript's
	// WebCrypto) does, those bits of the last byte are cleared rather than refused.
	unused := bits[0]
	if unused > 7 {
		return PublicKey{}, errNotSPKI
	}
	material := append([]byte(nil), bits[1:]...)
	if len(material) > 0 {
		material[len(material)-1] &= 0xff << unused
	}
	switch keyType {
	case KeyEd25519:
		if parameter != nil || len(material) != ed25519.PublicKeySize {
			return PublicKey{}, refuse("unreadable public key")
		}
		return newKey(KeyEd25519, nil, ed25519.PublicKey(material))
	case KeyECDSAP256:
		pub, ok := ecPoint(material)
		if !ok {
			return PublicKey{}, refuse("unreadable public key")
		}
		return newKey(KeyECDSAP256, nil, pub)
	default:
		// rsaEncryption has NULL parameters, or none.
		if parameter != nil && !(parameter.tag == 0x05 && len(parameter.value) == 0) {
			return PublicKey{}, refuse("unreadable public key")
		}
		pub, err := pkcs1Key(material)
		if err != nil {
			return PublicKey{}, err
		}
		return newKey(KeyRSA, nil, pub)
	}
}

// ecPoint reads a P-256 point: uncompressed (04), compressed (02, 03) or hybrid (06, 07).
// The point must be on the curve.
func ecPoint(b []byte) (*ecdsa.PublicKey, bool) {
	curve := elliptic.P256()
	var x, y *big.Int
	switch {
	case len(b) == 65 && b[0] == 0x04:
		x, y = elliptic.Unmarshal(curve, b)
	case len(b) == 33 && (b[0] == 0x02 || b[0] == 0x03):
		x, y = elliptic.UnmarshalCompressed(curve, b)
	case len(b) == 65 && (b[0] == 0x06 || b[0] == 0x07):
		if b[64]&1 != b[0]&1 {
			return nil, false
		}
		uncompressed := append([]byte{0x04}, b[1:]...)
		x, y = elliptic.Unmarshal(curve, uncompressed)
	}
	if x == nil {
		return nil, false
	}
	return &ecdsa.PublicKey{Curve: curve, X: x, Y: y}, true
}

// pkcs1Key reads RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER }.
// Bytes after the sequence are ignored, as OpenSSL (behind JavaScript's WebCrypto) ignores them.
func pkcs1Key(b []byte) (*rsa.PublicKey, error) {
	outer := derReader{b: b}
	seq, ok := outer.read(0x30)
	if !ok {
		return nil, refuse("unreadable public key")
	}
	inner := derReader{b: seq}
	n, ok1 := inner.integer()
	e, ok2 := inner.integer()
	if !ok1 || !ok2 || !inner.done() {
		return nil, refuse("unreadable public key")
	}
	return rsaKey(n, e)
}

// rsaKey checks an RSA key's numbers.
// The modulus has 2048 bits or more.
// Go's crypto/rsa needs an odd modulus and an exponent from 2 to 2^31 - 1, so other keys are
// refused too (no key the platform makes is one of them).
func rsaKey(n, e *big.Int) (*rsa.PublicKey, error) {
	if n.BitLen() < minRSAModulusBits {
		return nil, refuse("RSA keys need at least %d bits, got %d", minRSAModulusBits, n.BitLen())
	}
	if n.Bit(0) == 0 || e.Cmp(big.NewInt(2)) < 0 || e.BitLen() > 31 {
		return nil, refuse("unusable RSA key: Go needs an odd modulus and an exponent from 2 to 2^31 - 1")
	}
	return &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
}

func newKey(keyType KeyType, kid *string, key any) (PublicKey, error) {
	return PublicKey{Type: keyType, Alg: algOf[keyType], KeyID: kid, key: key}, nil
}

func jwkKey(jwk map[string]any) (PublicKey, error) {
	for _, member := range []string{"d", "p", "q", "dp", "dq", "qi", "k"} {
		// Handing a private (or secret) key to a verifier is a mistake worth surfacing.
		if _, present := jwk[member]; present {
			return PublicKey{}, refuse("a public JWK has no %q member", member)
		}
	}
	var keyType KeyType
	kty, crv := jwk["kty"], jwk["crv"]
	switch {
	case kty == "OKP" && crv == "Ed25519":
		keyType = KeyEd25519
	case kty == "EC" && crv == "P-256":
		keyType = KeyECDSAP256
	case kty == "RSA":
		keyType = KeyRSA
	default:
		return PublicKey{}, refuse("unsupported JWK: kty %v, crv %v", kty, crv)
	}
	if alg, present := jwk["alg"]; present && !(alg == algOf[keyType] || keyType == KeyEd25519 && alg == "Ed25519") {
		return PublicKey{}, refuse("a %s key verifies %s, not %v", keyType, algOf[keyType], alg)
	}
	if use, present := jwk["use"]; present && use != "sig" {
		return PublicKey{}, refuse("the JWK is not for signatures")
	}
	if ops, present := jwk["key_ops"]; present {
		list, ok := ops.([]any)
		allowed := false
		for _, op := range list {
			allowed = allowed || op == "verify"
		}
		if !ok || !allowed {
			return PublicKey{}, refuse(`the JWK does not allow "verify"`)
		}
	}
	var kid *string
	if value, present := jwk["kid"]; present {
		s, ok := value.(string)
		if !ok {
			return PublicKey{}, refuse("kid is a string")
		}
		kid = &s
	}

	// Only the key material is read.
	switch keyType {
	case KeyEd25519:
		x, err := jwkMember(jwk, "x")
		if err != nil {
			return PublicKey{}, err
		}
		if len(x) != ed25519.PublicKeySize {
			return PublicKey{}, refuse("unreadable JWK")
		}
		return newKey(KeyEd25519, kid, ed25519.PublicKey(x))
	case KeyECDSAP256:
		x, err := jwkMember(jwk, "x")
		if err != nil {
			return PublicKey{}, err
		}
		y, err := jwkMember(jwk, "y")
		if err != nil {
			return PublicKey{}, err
		}
		pub, ok := ecCoordinates(x, y)
		if !ok {
			return PublicKey{}, refuse("unreadable JWK")
		}
		return newKey(KeyECDSAP256, kid, pub)
	default:
		n, err := jwkMember(jwk, "n")
		if err != nil {
			return PublicKey{}, err
		}
		e, err := jwkMember(jwk, "e")
		if err != nil {
			return PublicKey{}, err
		}
		pub, err := rsaKey(new(big.Int).SetBytes(n), new(big.Int).SetBytes(e))
		if err != nil {
			return PublicKey{}, err
		}
		return newKey(KeyRSA, kid, pub)
	}
}

// ecCoordinates makes a P-256 key of big-endian coordinates.
// Leading zero bytes are allowed (JavaScript's WebCrypto allows them); the point must be on the curve.
func ecCoordinates(x, y []byte) (*ecdsa.PublicKey, bool) {
	curve := elliptic.P256()
	p := curve.Params().P
	bx, by := new(big.Int).SetBytes(x), new(big.Int).SetBytes(y)
	if bx.Cmp(p) >= 0 || by.Cmp(p) >= 0 {
		return nil, false
	}
	point := make([]byte, 65)
	point[0] = 0x04
	bx.FillBytes(point[1:33])
	by.FillBytes(point[33:])
	return ecPoint(point)
}

// jwkMember decodes a key member: a string of canonical unpadded base64url.
func jwkMember(jwk map[string]any, name string) ([]byte, error) {
	s, ok := jwk[name].(string)
	if !ok {
		return nil, refuse("the JWK's %q is not base64url", name)
	}
	b, ok := fromBase64URL(s)
	if !ok {
		return nil, refuse("the JWK's %q is not base64url", name)
	}
	return b, nil
}

// derReader reads DER elements one after another: a one-byte tag and a length.
// A long-form length has one to three bytes.
type derReader struct {
	b []byte
	i int
}

type derElement struct {
	tag   byte
	value []byte
}

func (r *derReader) done() bool {
	return r.i == len(r.b)
}

func (r *derReader) next() (derElement, bool) {
	if r.i >= len(r.b) {
		return derElement{}, false
	}
	tag := r.b[r.i]
	r.i++
	if r.i >= len(r.b) {
		return derElement{}, false
	}
	length := int(r.b[r.i])
	r.i++
	if length&0x80 != 0 {
		count := length & 0x7f
		if count == 0 || count > 3 {
			return derElement{}, false
		}
		length = 0
		for k := 0; k < count; k++ {
			if r.i >= len(r.b) {
				return derElement{}, false
			}
			length = length<<8 | int(r.b[r.i])
			r.i++
		}
	}
	if length > len(r.b)-r.i {
		return derElement{}, false
	}
	value := r.b[r.i : r.i+length]
	r.i += length
	return derElement{tag: tag, value: value}, true
}

func (r *derReader) read(tag byte) ([]byte, bool) {
	element, ok := r.next()
	if !ok || element.tag != tag {
		return nil, false
	}
	return element.value, true
}

// integer reads a positive INTEGER in its minimal encoding.
func (r *derReader) integer() (*big.Int, bool) {
	v, ok := r.read(0x02)
	if !ok || len(v) == 0 || v[0]&0x80 != 0 {
		return nil, false
	}
	if len(v) > 1 && v[0] == 0 && v[1]&0x80 == 0 {
		return nil, false
	}
	return new(big.Int).SetBytes(v), true
}
