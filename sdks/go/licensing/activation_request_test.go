package licensing_test

// Request and release files of air-gapped machines: their format (the JavaScript SDK's), their
// signature by the machine key, and the inputs refused. activations.json lends an activation file
// that the platform's signing code made. The platform itself takes these files in
// examples/online/offline_test.go.

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	licensing "github.com/licensing-platform/licensing/sdks/go/licensing"
)

// openJWS splits a compact JWS, checks its EdDSA signature with the key, and answers its header
// and payload.
func openJWS(t *testing.T, jws string, x string) (header, payload map[string]any) {
	t.Helper()
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		t.Fatalf("not a compact JWS: %q", jws)
	}
	decode := func(segment string) []byte {
		out, err := base64.RawURLEncoding.DecodeString(segment)
		if err != nil {
			t.Fatalf("segment %q: %v", segment, err)
		}
		return out
	}
	for i, into := range []*map[string]any{&header, &payload} {
		if err := json.Unmarshal(decode(parts[i]), into); err != nil {
			t.Fatal(err)
		}
	}
	if !ed25519.Verify(decode(x), []byte(parts[0]+"."+parts[1]), decode(parts[2])) {
		t.Fatal("the signature does not verify with the machine key")
	}
	return header, payload
}

func activationFileOfVectors(t *testing.T) (file string, activation map[string]any) {
	for _, named := range readVectorFiles(t) {
		if named.name != "activations.json" {
			continue
		}
		for _, v := range named.file.Vectors {
			if v.ID != "ed25519/valid" {
				continue
			}
			var input struct{ Text string }
			var expected struct{ Activation map[string]any }
			mustUnmarshal(v.Input, &input)
			mustUnmarshal(v.Expected, &expected)
			return input.Text, expected.Activation
		}
	}
	t.Fatal("activations.json has no vector ed25519/valid")
	return "", nil
}

func TestActivationRequestIsSignedByItsOwnMachineKey(t *testing.T) {
	before := time.Now().Unix()
	made, err := licensing.CreateActivationRequest(licensing.ActivationRequestInput{
		LicenseKey:  "LIC-CAD-7K3F9QX2M4W8T1ZC",
		Fingerprint: "machine-a",
		Components:  map[string]string{"cpu": "c1", "disk": "<d&1>"},
		Hostname:    "cad-01",
	})
	if err != nil {
		t.Fatal(err)
	}
	key := made.MachineKey
	if key["kty"] != "OKP" || key["crv"] != "Ed25519" || key["d"] == nil {
		t.Fatalf("the machine key is not an Ed25519 private JWK: %v", key)
	}
	header, claims := openJWS(t, made.Request, key["x"].(string))
	if header["alg"] != "EdDSA" || header["typ"] != "activation-request+jwt" || len(header) != 2 {
		t.Fatalf("header %v", header)
	}
	iat, _ := claims["iat"].(float64)
	if claims["v"] != 1.0 || claims["license_key"] != "LIC-CAD-7K3F9QX2M4W8T1ZC" ||
		claims["fingerprint"] != "machine-a" || claims["hostname"] != "cad-01" ||
		claims["nonce"] != made.Nonce || int64(iat) < before || int64(iat) > time.Now().Unix() {
		t.Fatalf("claims %v", claims)
	}
	if _, sent := claims["platform"]; sent {
		t.Fatal("an empty platform was sent")
	}
	if components := claims["components"].(map[string]any); components["disk"] != "<d&1>" {
		t.Fatalf("components %v", components)
	}
	jwk := claims["jwk"].(map[string]any)
	if len(jwk) != 3 || jwk["kty"] != "OKP" || jwk["crv"] != "Ed25519" || jwk["x"] != key["x"] {
		t.Fatalf("the request's jwk %v is not the machine key's public half", jwk)
	}
	if nonce, _ := base64.RawURLEncoding.DecodeString(made.Nonce); len(nonce) != 24 {
		t.Fatalf("nonce %q is not 24 random bytes", made.Nonce)
	}
	again, _ := licensing.CreateActivationRequest(licensing.ActivationRequestInput{LicenseKey: "L", Fingerprint: "f"})
	if again.Nonce == made.Nonce || again.MachineKey["x"] == key["x"] {
		t.Fatal("two requests share a nonce or a key")
	}
	// The machine key travels as JSON, and signs after the round trip.
	var stored map[string]any
	raw, _ := json.Marshal(key)
	_ = json.Unmarshal(raw, &stored)
	file, _ := activationFileOfVectors(t)
	if _, err := licensing.CreateActivationRelease(file, stored); err != nil {
		t.Fatal(err)
	}
}

func TestActivationReleaseNamesTheActivationAndIsSignedByTheMachineKey(t *testing.T) {
	file, activation := activationFileOfVectors(t)
	made, err := licensing.CreateActivationRequest(licensing.ActivationRequestInput{LicenseKey: "L", Fingerprint: "f"})
	if err != nil {
		t.Fatal(err)
	}
	release, err := licensing.CreateActivationRelease("\n "+file+"\n", made.MachineKey)
	if err != nil {
		t.Fatal(err)
	}
	header, claims := openJWS(t, release, made.MachineKey["x"].(string))
	if header["alg"] != "EdDSA" || header["typ"] != "activation-release+jwt" {
		t.Fatalf("header %v", header)
	}
	if claims["v"] != 1.0 || claims["activation_id"] != activation["activation_id"] ||
		claims["license_key"] != activation["serial"] || claims["fingerprint"] != activation["fingerprint"] ||
		len(claims) != 5 {
		t.Fatalf("claims %v", claims)
	}
}

func TestActivationRequestAndReleaseRefuseWhatTheyCannotUse(t *testing.T) {
	for _, input := range []licensing.ActivationRequestInput{{Fingerprint: "f"}, {LicenseKey: "L"}} {
		if _, err := licensing.CreateActivationRequest(input); !errors.Is(err, licensing.ErrInvalidOptions) {
			t.Errorf("request of %+v: %v", input, err)
		}
	}
	file, _ := activationFileOfVectors(t)
	made, _ := licensing.CreateActivationRequest(licensing.ActivationRequestInput{LicenseKey: "L", Fingerprint: "f"})
	other, _ := licensing.CreateActivationRequest(licensing.ActivationRequestInput{LicenseKey: "L", Fingerprint: "f"})
	publicOnly := map[string]any{"kty": "OKP", "crv": "Ed25519", "x": made.MachineKey["x"]}
	mixed := map[string]any{"kty": "OKP", "crv": "Ed25519", "x": made.MachineKey["x"], "d": other.MachineKey["d"]}
	padded := map[string]any{"kty": "OKP", "crv": "Ed25519", "x": made.MachineKey["x"], "d": made.MachineKey["d"].(string) + "="}
	for name, key := range map[string]map[string]any{"public only": publicOnly, "d of another key": mixed, "padded d": padded, "nil": nil} {
		if _, err := licensing.CreateActivationRelease(file, key); !errors.Is(err, licensing.ErrInvalidOptions) {
			t.Errorf("release with a machine key %s: %v", name, err)
		}
	}
	// A license file, a request and a changed payload are not activation files.
	parts := strings.Split(file, ".")
	for name, notActivation := range map[string]string{
		"a request":        made.Request,
		"a truncated file": parts[0] + "." + parts[1],
		"an empty text":    "",
		"another payload":  parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"v":1}`)) + "." + parts[2],
	} {
		if _, err := licensing.CreateActivationRelease(notActivation, made.MachineKey); !errors.Is(err, licensing.ErrInvalidOptions) {
			t.Errorf("release of %s: %v", name, err)
		}
	}
}
