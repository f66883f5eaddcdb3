package licensing

// Air-gapped activation, on the machine's side: a request file to carry to the licensing service,
// and a release file that gives the seat back. The activation file the service answers is checked
// by VerifyActivationFile. The formats are the JavaScript SDK's (createActivationRequest and
// createActivationRelease).

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"
)

const (
	activationRequestTyp = "activation-request+jwt"
	activationReleaseTyp = "activation-release+jwt"
)

// ActivationRequestInput is what a request asks for.
type ActivationRequestInput struct {
	// LicenseKey is the license's serial. Required.
	LicenseKey string
	// Fingerprint is this machine's. Required.
	Fingerprint string
	// Components, Hostname and Platform are recorded with the seat. Empty: not sent.
	Components map[string]string
	Hostname   string
	Platform   string
}

// ActivationRequest is a request file, with what the machine keeps until the answer comes.
type ActivationRequest struct {
	// Request is the file to carry to the service: POST /v1/activations/offline {"request": …}.
	Request string
	// MachineKey is the Ed25519 key made for this activation, as a private JWK (kty, crv, x, d).
	// Keep it on the machine, secret: it signs the release, and VerifyActivationFile checks the
	// answer was made for it. It marshals to JSON as it is.
	MachineKey map[string]any
	// Nonce is the request's: the activation file must echo it.
	Nonce string
}

type requestClaims struct {
	V           int               `json:"v"`
	LicenseKey  string            `json:"license_key"`
	Fingerprint string            `json:"fingerprint"`
	Components  map[string]string `json:"components,omitempty"`
	Hostname    string            `json:"hostname,omitempty"`
	Platform    string            `json:"platform,omitempty"`
	Nonce       string            `json:"nonce"`
	IssuedAt    int64             `json:"iat"`
	JWK         map[string]string `json:"jwk"`
}

type releaseClaims struct {
	V            int    `json:"v"`
	ActivationID string `json:"activation_id"`
	LicenseKey   string `json:"license_key"`
	Fingerprint  string `json:"fingerprint"`
	IssuedAt     int64  `json:"iat"`
}

// CreateActivationRequest makes a fresh Ed25519 key pair for this activation, and a request
// signed with it: the serial, the fingerprint, the components, a random nonce and the public key.
// The signature shows the service that the requester holds the key the release needs.
// The error wraps ErrInvalidOptions when the serial or the fingerprint is empty.
func CreateActivationRequest(input ActivationRequestInput) (ActivationRequest, error) {
	if input.LicenseKey == "" || input.Fingerprint == "" {
		return ActivationRequest{}, fmt.Errorf("%w: an activation request needs LicenseKey and Fingerprint", ErrInvalidOptions)
	}
	public, private, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return ActivationRequest{}, err
	}
	random := make([]byte, 24)
	if _, err := rand.Read(random); err != nil {
		return ActivationRequest{}, err
	}
	x := base64URL(public)
	claims := requestClaims{
		V:           1,
		LicenseKey:  input.LicenseKey,
		Fingerprint: input.Fingerprint,
		Components:  input.Components,
		Hostname:    input.Hostname,
		Platform:    input.Platform,
		Nonce:       base64URL(random),
		IssuedAt:    time.Now().Unix(),
		JWK:         map[string]string{"kty": "OKP", "crv": "Ed25519", "x": x},
	}
	request, err := signWithMachineKey(claims, activationRequestTyp, private)
	if err != nil {
		return ActivationRequest{}, err
	}
	machineKey := map[string]any{"kty": "OKP", "crv": "Ed25519", "x": x, "d": base64URL(private.Seed())}
	return ActivationRequest{Request: request, MachineKey: machineKey, Nonce: claims.Nonce}, nil
}

// CreateActivationRelease makes the release file that gives an activation's seat back:
// POST /v1/activations/offline/release {"release": …}. It is signed with the machine key of the
// request. Delete the activation file and the key afterwards.
// The error wraps ErrInvalidOptions when the file is not an activation file, or the key is not an
// Ed25519 private JWK.
func CreateActivationRelease(activationFile string, machineKey map[string]any) (string, error) {
	decoded, ok := decodeCompactJWS(trimSpace(activationFile), nil, false)
	var claims *activationClaims
	if ok && decoded.header["typ"] == activationTyp {
		claims, ok = readActivationClaims(decoded.payload)
	} else {
		ok = false
	}
	if !ok {
		return "", fmt.Errorf("%w: not an activation file", ErrInvalidOptions)
	}
	private, err := machinePrivateKey(machineKey)
	if err != nil {
		return "", err
	}
	return signWithMachineKey(releaseClaims{
		V:            1,
		ActivationID: claims.activation.ActivationID,
		LicenseKey:   claims.activation.Serial,
		Fingerprint:  claims.activation.Fingerprint,
		IssuedAt:     time.Now().Unix(),
	}, activationReleaseTyp, private)
}

// machinePrivateKey reads an Ed25519 private JWK whose d and x belong together.
func machinePrivateKey(jwk map[string]any) (ed25519.PrivateKey, error) {
	refused := fmt.Errorf("%w: the machine key is an Ed25519 private JWK", ErrInvalidOptions)
	d, _ := jwk["d"].(string)
	x, _ := jwk["x"].(string)
	if jwk["kty"] != "OKP" || jwk["crv"] != "Ed25519" || d == "" || x == "" {
		return nil, refused
	}
	seed, ok := fromBase64URL(d)
	if !ok || len(seed) != ed25519.SeedSize {
		return nil, refused
	}
	private := ed25519.NewKeyFromSeed(seed)
	if base64URL(private.Public().(ed25519.PublicKey)) != x {
		return nil, fmt.Errorf("%w: the machine key's d and x are not one key", ErrInvalidOptions)
	}
	return private, nil
}

// signWithMachineKey signs the claims as a compact JWS, EdDSA, of the given typ.
func signWithMachineKey(claims any, typ string, key ed25519.PrivateKey) (string, error) {
	header, err := compactJSON(map[string]string{"alg": "EdDSA", "typ": typ})
	if err != nil {
		return "", err
	}
	payload, err := compactJSON(claims)
	if err != nil {
		return "", err
	}
	signingInput := base64URL(header) + "." + base64URL(payload)
	return signingInput + "." + base64URL(ed25519.Sign(key, []byte(signingInput))), nil
}

// compactJSON is JSON without spaces, and without escaping <, > and &, as JSON.stringify writes it.
func compactJSON(v any) ([]byte, error) {
	var out bytes.Buffer
	encoder := json.NewEncoder(&out)
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}
