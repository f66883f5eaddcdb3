package main

// The walk-through against a running platform: sdks/go/online.int-spec.ts starts one, sets the
// environment, and runs this test. Without LICENSING_URL it is skipped.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/licensing-platform/licensing/sdks/go/licensing"
)

// recorder notes each request, and loses the answer of the first sync after the service stored it.
// That is the timeout a retry must not count twice.
type recorder struct {
	mu       sync.Mutex
	requests []string
	syncIDs  []string
	nonces   int
}

var errLost = errors.New("the answer was lost on the way back")

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body map[string]any
	if req.Body != nil {
		raw, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		_ = json.Unmarshal(raw, &body)
		req.Body = io.NopCloser(bytes.NewReader(raw))
	}
	credential := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
	r.mu.Lock()
	r.requests = append(r.requests, req.Method+" "+req.URL.Path+" "+credential[:2])
	if req.Header.Get("Licensing-Nonce") != "" {
		r.nonces++
	}
	lose := false
	if strings.HasSuffix(req.URL.Path, "/licenses/sync") {
		id, _ := body["report_id"].(string)
		r.syncIDs = append(r.syncIDs, id)
		lose = len(r.syncIDs) == 1
	}
	r.mu.Unlock()
	response, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || !lose {
		return response, err
	}
	_, _ = io.Copy(io.Discard, response.Body)
	response.Body.Close()
	return nil, errLost
}

func env(t *testing.T, names ...string) map[string]string {
	values := map[string]string{}
	for _, name := range names {
		if values[name] = os.Getenv(name); values[name] == "" {
			t.Skipf("%s is not set: the walk-through needs a running platform (see online.int-spec.ts)", name)
		}
	}
	return values
}

func TestWalkThroughAgainstThePlatform(t *testing.T) {
	e := env(t, "LICENSING_URL", "LICENSING_LICENSE_TOKEN", "LICENSING_LICENSE_KEY", "LICENSING_PUBLIC_KEY",
		"LICENSING_RESPONSE_KEYS", "LICENSING_CLIENT_KEY", "LICENSING_ADMIN_KEY", "LICENSING_LICENSE_ID",
		"LICENSING_OTHER_LICENSE_KEY")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The walk-through writes license.lic where it runs.
	dir, _ := os.Getwd()
	if err := os.Chdir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.Chdir(dir) }()

	rec := &recorder{}
	options := licensing.ClientOptions{
		BaseURL:      e["LICENSING_URL"],
		LicenseToken: e["LICENSING_LICENSE_TOKEN"],
		LicenseKey:   e["LICENSING_LICENSE_KEY"],
		Fingerprint:  "machine-a",
		Hostname:     "build-01",
		Platform:     "linux-x64",
		AppVersion:   "2.4.1",
		RetryDelay:   20 * time.Millisecond,
		Timeout:      5 * time.Second,
		HTTPClient:   &http.Client{Transport: rec},
	}
	if err := WalkThrough(ctx, options, e["LICENSING_CLIENT_KEY"]); err != nil {
		t.Fatalf("the walk-through failed: %v\nrequests:\n%s", err, strings.Join(rec.requests, "\n"))
	}
	if file, err := os.ReadFile("license.lic"); err != nil || len(file) == 0 {
		t.Fatalf("no license.lic: %v", err)
	}

	// The lost sync answer was retried with the same report_id.
	if len(rec.syncIDs) != 2 || rec.syncIDs[0] != rec.syncIDs[1] || rec.syncIDs[0] == "" {
		t.Fatalf("sync attempts sent report ids %v", rec.syncIDs)
	}
	// The seat's calls carried its machine token; activate and check-in the license token.
	for _, want := range []string{
		"POST /v1/activations lt",
		"POST /v1/licenses/validate mt",
		"POST /v1/licenses/sync mt",
		"POST /v1/licenses/check-revocation lk",
		"DELETE /v1/activations/",
	} {
		if !strings.Contains(strings.Join(rec.requests, "\n"), want) {
			t.Errorf("no request %q in:\n%s", want, strings.Join(rec.requests, "\n"))
		}
	}
	// Validate, both sync attempts and check-revocation asked for a signed answer.
	if rec.nonces != 4 {
		t.Errorf("%d requests asked for a signed answer, want 4", rec.nonces)
	}

	// License A's token cannot act on license B: the platform answers not_found.
	abuse := options
	abuse.HTTPClient = nil
	abuse.LicenseKey = e["LICENSING_OTHER_LICENSE_KEY"]
	other, err := licensing.NewClient(abuse)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Activate(ctx); !isRefusal(err, "not_found", 404) {
		t.Errorf("activate of another license: %v", err)
	}
	if state, err := other.Validate(ctx); err != nil || state.Valid || state.Status != licensing.StatusNotFound || state.Offline {
		t.Errorf("validate of another license: %+v, %v", state, err)
	}
	if state, err := other.Sync(ctx, licensing.SyncReport{}); err != nil || state.Valid || state.Status != licensing.StatusNotFound {
		t.Errorf("sync of another license: %+v, %v", state, err)
	}
	if _, err := other.CheckIn(ctx); !isRefusal(err, "not_found", 0) {
		t.Errorf("check-in of another license: %v", err)
	}
	if _, err := other.Checkout(ctx, licensing.CheckoutOptions{}); !isRefusal(err, "not_found", 0) {
		t.Errorf("checkout of another license: %v", err)
	}

	// An admin revokes license A: validate says so at once, and so does check-revocation.
	revoke, _ := http.NewRequestWithContext(ctx, http.MethodDelete, e["LICENSING_URL"]+"/v1/licenses/"+e["LICENSING_LICENSE_ID"], nil)
	revoke.Header.Set("Authorization", "Bearer "+e["LICENSING_ADMIN_KEY"])
	response, err := http.DefaultClient.Do(revoke)
	if err != nil || response.StatusCode != 200 {
		t.Fatalf("revoke: %v %v", response, err)
	}
	response.Body.Close()
	options.HTTPClient = nil
	client, err := licensing.NewClient(options)
	if err != nil {
		t.Fatal(err)
	}
	if state, err := client.Validate(ctx); err != nil || state.Valid || state.Status != licensing.StatusRevoked {
		t.Errorf("validate after revoke: %+v, %v", state, err)
	}
	keyed := options
	keyed.LicenseToken, keyed.APIKey = "", e["LICENSING_CLIENT_KEY"]
	withKey, _ := licensing.NewClient(keyed)
	if results, err := withKey.CheckRevocation(ctx); err != nil || results[0].Status != "revoked" || results[0].RevokedAt == nil {
		t.Errorf("check-revocation after revoke: %+v, %v", results, err)
	}
	if _, err := client.Activate(ctx); !isRefusal(err, "license_not_active", 422) {
		t.Errorf("activate after revoke: %v", err)
	}
}

// isRefusal says err is the platform's refusal with this code (and this status, unless 0).
func isRefusal(err error, code string, status int) bool {
	var failure *licensing.ClientError
	return errors.As(err, &failure) && failure.Code == code && (status == 0 || failure.Status == status)
}
