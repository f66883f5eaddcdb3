package main

// The air-gapped flow against a running platform: a request file made by the SDK, the activation
// file the platform answers (POST /v1/activations/offline) verified by the SDK, and the SDK's
// release file (POST /v1/activations/offline/release). sdks/go/online.int-spec.ts sets
// LICENSING_URL, LICENSING_PUBLIC_KEY, LICENSING_ADMIN_KEY and LICENSING_OFFLINE: a license of one
// seat, with a license token. The files cross the "air gap" as text, as a person would carry them.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/licensing-platform/licensing/sdks/go/licensing"
)

// post sends a JSON body with a bearer credential, and answers the status and the JSON answer.
func post(t *testing.T, url, credential string, body any) (int, map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	request, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
	request.Header.Set("Authorization", "Bearer "+credential)
	request.Header.Set("Content-Type", "application/json")
	response, err := http.DefaultClient.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	var answer map[string]any
	_ = json.NewDecoder(response.Body).Decode(&answer)
	return response.StatusCode, answer
}

func TestAirGappedActivationAgainstThePlatform(t *testing.T) {
	e := env(t, "LICENSING_URL", "LICENSING_PUBLIC_KEY", "LICENSING_ADMIN_KEY", "LICENSING_OFFLINE")
	var license outageLicense
	if err := json.Unmarshal([]byte(e["LICENSING_OFFLINE"]), &license); err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(e["LICENSING_PUBLIC_KEY"])
	if err != nil {
		t.Fatal(err)
	}
	productKeys, err := licensing.ParsePublicKey(pem)
	if err != nil {
		t.Fatal(err)
	}
	offline := e["LICENSING_URL"] + "/v1/activations/offline"

	// 1. On the machine: a request, and its key and nonce kept.
	made, err := licensing.CreateActivationRequest(licensing.ActivationRequestInput{
		LicenseKey:  license.Serial,
		Fingerprint: "air-gapped-1",
		Components:  map[string]string{"cpu": "GenuineIntel-06-8C-01", "disk": "S4EVNX0R123456"},
		Hostname:    "cad-01",
		Platform:    "linux-x64",
	})
	if err != nil {
		t.Fatal(err)
	}

	// 2. Elsewhere, online: the platform takes the seat and answers the activation file.
	status, answer := post(t, offline, license.Token, map[string]any{"request": made.Request})
	if status != 201 {
		t.Fatalf("offline activation: %d %v", status, answer)
	}
	file, _ := answer["activation_file"].(string)
	seat, _ := answer["activation"].(map[string]any)

	// 3. Back on the machine: the file verifies with the product's key, for this request only.
	result, err := licensing.VerifyActivationFile(file, productKeys, licensing.ActivationOptions{
		Nonce: made.Nonce, MachineKey: made.MachineKey, Fingerprint: "air-gapped-1",
	})
	if err != nil || !result.Valid {
		t.Fatalf("the activation file does not verify: %+v, %v", result, err)
	}
	a := result.Activation
	if a.ActivationID != seat["id"] || a.Serial != license.Serial || a.LicenseID != license.ID ||
		a.Components["disk"] != "S4EVNX0R123456" || a.ExpiresAt != answer["expires_at"] {
		t.Fatalf("the activation file says %+v; the platform answered %v", a, answer)
	}
	other, _ := licensing.CreateActivationRequest(licensing.ActivationRequestInput{LicenseKey: license.Serial, Fingerprint: "air-gapped-2"})
	replayed, _ := licensing.VerifyActivationFile(file, productKeys, licensing.ActivationOptions{
		Nonce: other.Nonce, MachineKey: other.MachineKey, Fingerprint: "air-gapped-2",
	})
	if codes := codesOfErrors(replayed.Errors); codes != "nonce_mismatch machine_key_mismatch fingerprint_mismatch" {
		t.Fatalf("the file on another machine: %s", codes)
	}

	// The request again renews the same seat. Another machine finds no seat left (the license has one).
	status, renewed := post(t, offline, license.Token, map[string]any{"request": made.Request})
	if renewed, _ := renewed["activation"].(map[string]any); status != 200 || renewed["id"] != seat["id"] {
		t.Fatalf("renewal: %d %v", status, renewed)
	}
	if status, answer := post(t, offline, license.Token, map[string]any{"request": other.Request}); status != 409 || answer["code"] != "seat_limit_reached" {
		t.Fatalf("a second machine: %d %v", status, answer)
	}
	// A request whose key was swapped after signing is refused: the signature is the SDK's.
	parts := strings.Split(made.Request, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	swapped := strings.Replace(string(payload), made.MachineKey["x"].(string), other.MachineKey["x"].(string), 1)
	forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(swapped)) + "." + parts[2]
	if status, answer := post(t, offline, license.Token, map[string]any{"request": forged}); status != 400 || answer["code"] != "validation_failed" {
		t.Fatalf("a request signed by another key: %d %v", status, answer)
	}

	// 4. Leaving: a release signed by another key is refused; the machine's own frees the seat.
	wrong, err := licensing.CreateActivationRelease(file, other.MachineKey)
	if err != nil {
		t.Fatal(err)
	}
	if status, answer := post(t, offline+"/release", license.Token, map[string]any{"release": wrong}); status != 400 || answer["code"] != "validation_failed" {
		t.Fatalf("a release by another key: %d %v", status, answer)
	}
	if seats := seatsOf(t, e, license.ID); len(seats) != 1 {
		t.Fatalf("seats after a refused release: %+v", seats)
	}
	release, err := licensing.CreateActivationRelease(file, made.MachineKey)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // releasing twice changes nothing more
		if status, answer := post(t, offline+"/release", license.Token, map[string]any{"release": release}); status != 200 {
			t.Fatalf("release %d: %d %v", i+1, status, answer)
		}
	}
	if seats := seatsOf(t, e, license.ID); len(seats) != 0 {
		t.Fatalf("seats after the release: %+v", seats)
	}
	// The seat is free for the other machine.
	if status, answer := post(t, offline, license.Token, map[string]any{"request": other.Request}); status != 201 {
		t.Fatalf("the other machine after the release: %d %v", status, answer)
	}
}

func codesOfErrors(errs []licensing.VerifyError) string {
	codes := make([]string, len(errs))
	for i, e := range errs {
		codes[i] = string(e.Code)
	}
	return strings.Join(codes, " ")
}
