package licensing

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// The client's failure paths, against a local server that answers what each test scripts.
// The platform itself is exercised by the end-to-end test (examples/online).

type answer struct {
	status  int
	body    string
	headers map[string]string
	// hang holds the request until the client gives up.
	hang bool
	// sign signs the body with the test's response key, for the nonce the request sent.
	sign bool
	// nonce, when set, is signed instead of the request's.
	nonce string
}

type seen struct {
	at            time.Time
	method, path  string
	authorization string
	nonce         string
	body          map[string]any
}

type scripted struct {
	t      *testing.T
	server *httptest.Server
	key    ed25519.PrivateKey
	keys   *KeySet

	mu     sync.Mutex
	script []answer
	seen   []seen
}

func newScripted(t *testing.T, script ...answer) *scripted {
	t.Helper()
	public, private, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	jwk := fmt.Sprintf(`{"kty":"OKP","crv":"Ed25519","kid":"rk-1","x":"%s"}`, base64.RawURLEncoding.EncodeToString(public))
	keys, err := ParsePublicKeyJSON([]byte(jwk))
	if err != nil {
		t.Fatal(err)
	}
	s := &scripted{t: t, key: private, keys: keys, script: script}
	s.server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.server.Close)
	return s
}

func (s *scripted) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	s.mu.Lock()
	s.seen = append(s.seen, seen{time.Now(), r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Licensing-Nonce"), body})
	next := answer{status: 500, body: `{}`}
	if len(s.script) > 0 {
		next, s.script = s.script[0], s.script[1:]
	}
	s.mu.Unlock()
	if next.hang {
		<-r.Context().Done()
		return
	}
	for name, value := range next.headers {
		w.Header().Set(name, value)
	}
	if next.sign {
		nonce := r.Header.Get("Licensing-Nonce")
		if next.nonce != "" {
			nonce = next.nonce
		}
		w.Header().Set("Licensing-Signature", s.signature([]byte(next.body), nonce, time.Now()))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(next.status)
	_, _ = io.WriteString(w, next.body)
}

// signature is a JWS with detached payload over body, as the gateway signs an answer.
func (s *scripted) signature(body []byte, nonce string, at time.Time) string {
	header, _ := json.Marshal(map[string]any{"alg": "EdDSA", "typ": "licensing-answer+jws", "kid": "rk-1", "nonce": nonce, "iat": at.Unix()})
	h := base64.RawURLEncoding.EncodeToString(header)
	input := h + "." + base64.RawURLEncoding.EncodeToString(body)
	return h + ".." + base64.RawURLEncoding.EncodeToString(ed25519.Sign(s.key, []byte(input)))
}

func (s *scripted) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.seen...)
}

func (s *scripted) client(t *testing.T, change func(*ClientOptions)) *Client {
	t.Helper()
	options := ClientOptions{BaseURL: s.server.URL, APIKey: "lk_test", LicenseKey: "LIC-1", RetryDelay: 40 * time.Millisecond}
	if change != nil {
		change(&options)
	}
	c, err := NewClient(options)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func codeOf(t *testing.T, err error) *ClientError {
	t.Helper()
	var failure *ClientError
	if !errors.As(err, &failure) {
		t.Fatalf("want a *ClientError, got %v", err)
	}
	return failure
}

const revocationOK = `{"results":[{"serial":"LIC-1","status":"active","revoked_at":null}],"checked_at":"2030-01-01T00:00:00.000Z"}`

func TestClientNeedsOneCredential(t *testing.T) {
	for _, options := range []ClientOptions{
		{BaseURL: "http://x", LicenseKey: "LIC-1"},
		{BaseURL: "http://x", LicenseKey: "LIC-1", APIKey: "lk", LicenseToken: "lt"},
		{BaseURL: "http://x", LicenseToken: "lt"},
		{BaseURL: "http://x", LicenseKey: "LIC-1", LicenseToken: "lt", Retries: RetryCount(-1)},
	} {
		if _, err := NewClient(options); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%+v: want ErrInvalidOptions, got %v", options, err)
		}
	}
}

func TestClientRetriesWithGrowingBackoff(t *testing.T) {
	s := newScripted(t, answer{status: 503, body: `{}`}, answer{status: 502, body: `{}`}, answer{status: 200, body: revocationOK})
	results, err := s.client(t, nil).CheckRevocation(context.Background())
	if err != nil || len(results) != 1 || results[0].Status != "active" {
		t.Fatalf("got %+v, %v", results, err)
	}
	seen := s.requests()
	if len(seen) != 3 {
		t.Fatalf("want 3 attempts, got %d", len(seen))
	}
	// Backoffs of 20-40 ms, then 40-80 ms: half fixed, half jitter.
	if gap := seen[1].at.Sub(seen[0].at); gap < 20*time.Millisecond {
		t.Errorf("first backoff %v, want at least 20 ms", gap)
	}
	if gap := seen[2].at.Sub(seen[1].at); gap < 40*time.Millisecond {
		t.Errorf("second backoff %v, want at least 40 ms", gap)
	}
	if seen[0].authorization != "Bearer lk_test" {
		t.Errorf("authorization %q", seen[0].authorization)
	}
}

func TestClientGivesUpAfterTheRetries(t *testing.T) {
	s := newScripted(t, answer{status: 503, body: `{"code":"unavailable","detail":"down"}`}, answer{status: 503, body: `{"code":"unavailable","detail":"down"}`})
	_, err := s.client(t, func(o *ClientOptions) { o.Retries = RetryCount(1) }).CheckRevocation(context.Background())
	failure := codeOf(t, err)
	if failure.Code != "unavailable" || failure.Status != 503 || !failure.Offline() || len(s.requests()) != 2 {
		t.Fatalf("got %+v after %d attempts", failure, len(s.requests()))
	}
}

func TestClientDoesNotRetryARefusal(t *testing.T) {
	s := newScripted(t, answer{status: 403, body: `{"code":"forbidden","detail":"a license token cannot check revocation"}`})
	_, err := s.client(t, nil).CheckRevocation(context.Background())
	failure := codeOf(t, err)
	if failure.Code != "forbidden" || failure.Status != 403 || failure.Offline() || len(s.requests()) != 1 {
		t.Fatalf("got %+v after %d attempts", failure, len(s.requests()))
	}
	s = newScripted(t, answer{status: 404, body: `not json`})
	failure = codeOf(t, func() error { _, err := s.client(t, nil).CheckRevocation(context.Background()); return err }())
	if failure.Code != "http_404" || failure.Message != "HTTP 404" {
		t.Fatalf("got %+v", failure)
	}
}

func TestClientHonoursRetryAfter(t *testing.T) {
	s := newScripted(t, answer{status: 429, body: `{"code":"rate_limited"}`, headers: map[string]string{"Retry-After": "1"}}, answer{status: 200, body: revocationOK})
	if _, err := s.client(t, func(o *ClientOptions) { o.RetryDelay = time.Millisecond }).CheckRevocation(context.Background()); err != nil {
		t.Fatal(err)
	}
	seen := s.requests()
	if gap := seen[1].at.Sub(seen[0].at); gap < 900*time.Millisecond {
		t.Errorf("retried after %v, want the second Retry-After asked", gap)
	}
}

func TestClientTimesOutEachAttempt(t *testing.T) {
	s := newScripted(t, answer{hang: true}, answer{hang: true})
	started := time.Now()
	_, err := s.client(t, func(o *ClientOptions) { o.Timeout = 100 * time.Millisecond; o.Retries = RetryCount(1) }).CheckRevocation(context.Background())
	failure := codeOf(t, err)
	if failure.Code != "timeout" || failure.Status != 0 || !failure.Offline() {
		t.Fatalf("got %+v", failure)
	}
	if len(s.requests()) != 2 || time.Since(started) < 200*time.Millisecond {
		t.Fatalf("%d attempts in %v", len(s.requests()), time.Since(started))
	}
}

func TestClientStopsWhenTheContextEnds(t *testing.T) {
	s := newScripted(t, answer{status: 503, body: `{}`}, answer{status: 503, body: `{}`})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	started := time.Now()
	_, err := s.client(t, func(o *ClientOptions) { o.RetryDelay = 10 * time.Second }).CheckRevocation(ctx)
	failure := codeOf(t, err)
	if failure.Code != "timeout" || !errors.Is(err, context.DeadlineExceeded) || time.Since(started) > 2*time.Second {
		t.Fatalf("got %+v after %v", failure, time.Since(started))
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	_, err = s.client(t, nil).CheckRevocation(ctx)
	if !errors.Is(err, context.Canceled) || codeOf(t, err).Code != "canceled" {
		t.Fatalf("got %v", err)
	}
}

func TestSyncSendsOneReportIDOnEveryRetry(t *testing.T) {
	ok := `{"status":"ok","message":null,"server_time":"2030-01-01T00:00:00.000Z"}`
	s := newScripted(t, answer{status: 503, body: `{}`}, answer{hang: true}, answer{status: 200, body: ok})
	c := s.client(t, func(o *ClientOptions) {
		o.Timeout = 100 * time.Millisecond
		o.Fingerprint = "machine-a"
		o.AppVersion = "2.4.1"
	})
	seats := 2
	state, err := c.Sync(context.Background(), SyncReport{FeaturesUsed: []string{"pro"}, SeatsInUse: &seats})
	if err != nil || !state.Valid || state.Status != StatusOK {
		t.Fatalf("got %+v, %v", state, err)
	}
	seen := s.requests()
	if len(seen) != 3 {
		t.Fatalf("want 3 attempts, got %d", len(seen))
	}
	id, _ := seen[0].body["report_id"].(string)
	if len(id) != 36 || id[14] != '7' {
		t.Fatalf("report_id %q is not a version-7 UUID", id)
	}
	for _, r := range seen {
		if r.body["report_id"] != id || r.body["license_serial"] != "LIC-1" || r.body["hardware_fingerprint"] != "machine-a" ||
			r.body["app_version"] != "2.4.1" || r.body["seats_in_use"] != float64(2) {
			t.Fatalf("attempt sent %v", r.body)
		}
	}
	// A second sync is another report.
	s.mu.Lock()
	s.script = []answer{{status: 200, body: ok}}
	s.mu.Unlock()
	if _, err := c.Sync(context.Background(), SyncReport{}); err != nil {
		t.Fatal(err)
	}
	if next := s.requests()[3].body["report_id"]; next == id {
		t.Fatal("a new sync reused the report_id")
	}
}

func TestValidateRidesAnOutageOnTheGracePeriod(t *testing.T) {
	valid := `{"valid":true,"code":"VALID","detail":"The license is valid","license":{"id":"11111111-1111-4111-8111-111111111111"},"activation":null}`
	s := newScripted(t, answer{status: 200, body: valid})
	clock := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	store := &memoryStore{}
	c := s.client(t, func(o *ClientOptions) {
		o.Now = now
		o.Retries = RetryCount(0)
		o.OfflineGracePeriod = Seconds(3 * 86400)
		o.Store = store
	})
	// Before any answer, an outage is not valid.
	s.mu.Lock()
	s.script = []answer{{status: 503, body: `{}`}, {status: 200, body: valid}}
	s.mu.Unlock()
	state, err := c.Validate(context.Background())
	if err != nil || state.Valid || state.Status != StatusUnknown || !state.Offline || state.CheckedAt != nil {
		t.Fatalf("got %+v, %v", state, err)
	}
	state, err = c.Validate(context.Background())
	if err != nil || !state.Valid || state.Offline || *state.CheckedAt != "2030-01-01T00:00:00.000Z" || *state.GraceUntil != "2030-01-04T00:00:00.000Z" {
		t.Fatalf("got %+v, %v", state, err)
	}
	if store.state == nil || store.state.Status != StatusOK {
		t.Fatalf("the store holds %+v", store.state)
	}
	// Two days later the service is down: the last ok still counts.
	mu.Lock()
	clock = clock.Add(2 * 24 * time.Hour)
	mu.Unlock()
	s.mu.Lock()
	s.script = []answer{{status: 502, body: `{}`}}
	s.mu.Unlock()
	state, err = c.Validate(context.Background())
	if err != nil || !state.Valid || !state.Offline || state.Status != StatusOK || *state.GraceUntil != "2030-01-04T00:00:00.000Z" {
		t.Fatalf("got %+v, %v", state, err)
	}
	// Past the grace period it does not.
	mu.Lock()
	clock = clock.Add(2 * 24 * time.Hour)
	mu.Unlock()
	state, err = c.LastKnownState()
	if err != nil || state.Valid || !state.Offline || state.Status != StatusOK {
		t.Fatalf("got %+v, %v", state, err)
	}
	// A new client with the same store starts from the stored state.
	restarted := s.client(t, func(o *ClientOptions) { o.Now = now; o.Store = store; o.OfflineGracePeriod = Seconds(10 * 86400) })
	if state, _ = restarted.LastKnownState(); !state.Valid || *state.CheckedAt != "2030-01-01T00:00:00.000Z" {
		t.Fatalf("restarted with %+v", state)
	}
	// A refusal is an error, not an outage.
	s.mu.Lock()
	s.script = []answer{{status: 401, body: `{"code":"unauthorized","detail":"bad token"}`}}
	s.mu.Unlock()
	if _, err = c.Validate(context.Background()); codeOf(t, err).Code != "unauthorized" {
		t.Fatalf("got %v", err)
	}
}

func TestValidateSpeaksOneVocabulary(t *testing.T) {
	for code, want := range map[string]StatusCode{
		"VALID": StatusOK, "REVOKED": StatusRevoked, "SUSPENDED": StatusSuspended, "EXPIRED": StatusExpired,
		"NOT_FOUND": StatusNotFound, "FINGERPRINT_MISMATCH": StatusFingerprintMismatch, "NO_ACTIVATION": StatusNoActivation,
		"HEARTBEAT_DEAD": StatusHeartbeatDead, "COMPONENTS_MISMATCH": StatusComponentsMismatch, "OVERDUE": StatusOverdue,
		"ENTITLEMENTS_MISSING": StatusEntitlementsMissing, "OVERAGE": StatusOverage, "SOMETHING_NEW": StatusUnknown,
	} {
		s := newScripted(t, answer{status: 200, body: fmt.Sprintf(`{"valid":false,"code":%q,"detail":"d"}`, code)})
		state, err := s.client(t, nil).Validate(context.Background())
		runs := want == StatusOK || want == StatusOverage
		if err != nil || state.Status != want || state.Valid != runs || (state.GraceUntil != nil) != runs {
			t.Errorf("%s: got %+v, %v", code, state, err)
		}
	}
}

func TestClientChecksSignedAnswers(t *testing.T) {
	valid := `{"valid":true,"code":"VALID","detail":"ok"}`
	s := newScripted(t, answer{status: 200, body: valid, sign: true})
	c := s.client(t, func(o *ClientOptions) { o.ResponseKeys = s.keys; o.Retries = RetryCount(0) })
	state, err := c.Validate(context.Background())
	if err != nil || !state.Valid {
		t.Fatalf("got %+v, %v", state, err)
	}
	if nonce := s.requests()[0].nonce; len(nonce) < 16 {
		t.Fatalf("the request sent nonce %q", nonce)
	}
	for name, bad := range map[string]answer{
		"unsigned":          {status: 200, body: valid},
		"nonce_mismatch":    {status: 200, body: valid, sign: true, nonce: "another-request-nonce"},
		"signature_invalid": {status: 200, body: valid, headers: map[string]string{"Licensing-Signature": s.signature([]byte(`{"valid":false}`), "x", time.Now())}},
	} {
		s.mu.Lock()
		s.script = []answer{bad}
		s.mu.Unlock()
		_, err := c.Validate(context.Background())
		if failure := codeOf(t, err); failure.Code != name || failure.Offline() {
			t.Errorf("%s: got %+v", name, failure)
		}
	}
	// Without response keys nothing is asked, and nothing is checked.
	s.mu.Lock()
	s.script = []answer{{status: 200, body: valid}}
	s.mu.Unlock()
	before := len(s.requests())
	if _, err := s.client(t, nil).Validate(context.Background()); err != nil || s.requests()[before].nonce != "" {
		t.Fatalf("got %v, nonce %q", err, s.requests()[before].nonce)
	}
}

const seat = `{"id":"22222222-2222-4222-8222-222222222222","license_id":"11111111-1111-4111-8111-111111111111","fingerprint":"machine-a","hostname":"build-01","platform":null,"components":{},"created_at":"2030-01-01T00:00:00.000Z","last_heartbeat_at":"2030-01-01T00:00:00.000Z","expires_at":null}`

func TestActivateKeepsTheMachineTokenForTheSeat(t *testing.T) {
	withToken := strings.TrimSuffix(seat, "}") + `,"machine_token":"mt_secret"}`
	s := newScripted(t,
		answer{status: 201, body: withToken},
		answer{status: 200, body: seat},
		answer{status: 401, body: `{"code":"unauthorized"}`},
		answer{status: 200, body: seat},
		answer{status: 200, body: `{"message":"deleted"}`},
	)
	store := &memoryStore{}
	c := s.client(t, func(o *ClientOptions) {
		o.APIKey, o.LicenseToken = "", "lt_token"
		o.Fingerprint, o.Hostname = "machine-a", "build-01"
		o.Store = store
	})
	activation, err := c.Activate(context.Background())
	if err != nil || activation.ID != "22222222-2222-4222-8222-222222222222" {
		t.Fatalf("got %+v, %v", activation, err)
	}
	if store.activation == nil || *store.activation.MachineToken != "mt_secret" || store.activation.LicenseKey != "LIC-1" {
		t.Fatalf("stored %+v", store.activation)
	}
	if _, err := c.Heartbeat(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The machine token is refused: the client drops it and asks with the license token.
	if _, err := c.Heartbeat(context.Background()); err != nil {
		t.Fatal(err)
	}
	if store.activation.MachineToken != nil {
		t.Fatal("the dropped machine token is still stored")
	}
	if err := c.Deactivate(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range s.requests() {
		got = append(got, r.method+" "+r.path+" "+r.authorization[len("Bearer "):][:2])
	}
	want := []string{
		"POST /v1/activations lt",
		"POST /v1/activations/22222222-2222-4222-8222-222222222222/heartbeat mt",
		"POST /v1/activations/22222222-2222-4222-8222-222222222222/heartbeat mt",
		"POST /v1/activations/22222222-2222-4222-8222-222222222222/heartbeat lt",
		"DELETE /v1/activations/22222222-2222-4222-8222-222222222222 lt",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("requests:\n%s", strings.Join(got, "\n"))
	}
	if store.activation != nil || c.CurrentActivation() != nil {
		t.Fatal("the seat is still held after Deactivate")
	}
	if _, err := c.Heartbeat(context.Background()); !errors.Is(err, ErrNoActivation) {
		t.Fatalf("got %v", err)
	}
}

func TestHeartbeatGoroutine(t *testing.T) {
	s := newScripted(t, answer{status: 201, body: seat}, answer{status: 200, body: seat}, answer{status: 503, body: `{"code":"unavailable","detail":"down"}`}, answer{status: 200, body: seat})
	c := s.client(t, func(o *ClientOptions) {
		o.Fingerprint = "machine-a"
		o.HeartbeatInterval = 30 * time.Millisecond
		o.Retries = RetryCount(0)
	})
	if err := c.StartHeartbeat(context.Background(), nil); !errors.Is(err, ErrNoActivation) {
		t.Fatalf("before Activate: %v", err)
	}
	if _, err := c.Activate(context.Background()); err != nil {
		t.Fatal(err)
	}
	failures := make(chan error, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := c.StartHeartbeat(ctx, func(err error) { failures <- err }); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-failures:
		if codeOf(t, err).Code != "unavailable" {
			t.Fatalf("got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no failure reported")
	}
	// The next beat succeeds and clears the error.
	deadline := time.Now().Add(5 * time.Second)
	for len(s.requests()) < 4 || c.HeartbeatError() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("after %d requests the error is %v", len(s.requests()), c.HeartbeatError())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Canceling the context stops it. StopHeartbeat then waits for the goroutine to end.
	cancel()
	c.StopHeartbeat()
	stopped := len(s.requests())
	time.Sleep(100 * time.Millisecond)
	if len(s.requests()) != stopped {
		t.Fatal("the heartbeat goes on after cancel")
	}
	// StopHeartbeat stops a running one, and waits for it.
	s.mu.Lock()
	s.script = nil
	for i := 0; i < 50; i++ {
		s.script = append(s.script, answer{status: 200, body: seat})
	}
	s.mu.Unlock()
	if err := c.StartHeartbeat(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(80 * time.Millisecond)
	c.StopHeartbeat()
	stopped = len(s.requests())
	time.Sleep(100 * time.Millisecond)
	if len(s.requests()) != stopped || stopped <= 4 {
		t.Fatalf("%d requests, then %d", stopped, len(s.requests()))
	}
}

func TestHeartbeatDelayFollowsTheSeatsLifetime(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c, _ := NewClient(ClientOptions{BaseURL: "http://x", LicenseKey: "L", APIKey: "k", Now: func() time.Time { return now }})
	if d := c.heartbeatDelay(); d != DefaultHeartbeatInterval {
		t.Fatalf("without a seat: %v", d)
	}
	for expires, want := range map[string]time.Duration{
		"2030-01-01T00:00:10.000Z": 5 * time.Second,
		"2030-01-01T00:00:01.000Z": time.Second,
		"2030-01-02T00:00:00.000Z": DefaultHeartbeatInterval,
	} {
		e := expires
		c.activation = &OnlineActivation{ID: "a", ExpiresAt: &e}
		if d := c.heartbeatDelay(); d != want {
			t.Errorf("expiring %s: %v, want %v", expires, d, want)
		}
	}
}

func TestCheckInAndCheckoutFindTheLicense(t *testing.T) {
	valid := `{"valid":true,"code":"VALID","detail":"ok","license":{"serial":"LIC-1"},"activation":` + seat + `}`
	checkout := `{"license_blob":"bm90IGEgbGljZW5zZQ==","issued_at":"2030-01-01T00:00:00.000Z","expires_at":"2030-01-08T00:00:00.000Z"}`
	s := newScripted(t,
		answer{status: 200, body: valid},
		answer{status: 200, body: `{"id":"11111111-1111-4111-8111-111111111111","serial":"LIC-1","status":"active","last_check_in_at":"2030-01-01T00:00:00.000Z"}`},
		answer{status: 200, body: checkout},
		answer{status: 200, body: checkout},
	)
	c := s.client(t, func(o *ClientOptions) { o.Fingerprint = "machine-a" })
	in, err := c.CheckIn(context.Background())
	if err != nil || in.LicenseID != "11111111-1111-4111-8111-111111111111" || *in.LastCheckInAt != "2030-01-01T00:00:00.000Z" {
		t.Fatalf("got %+v, %v", in, err)
	}
	out, err := c.Checkout(context.Background(), CheckoutOptions{TTL: 7 * 24 * time.Hour})
	if err != nil || string(out.File) != "not a license" || out.Verification != nil {
		t.Fatalf("got %+v, %v", out, err)
	}
	seen := s.requests()
	if seen[1].path != "/v1/licenses/11111111-1111-4111-8111-111111111111/check-in" || seen[2].path != "/v1/licenses/11111111-1111-4111-8111-111111111111/checkout" || seen[2].body["ttl_seconds"] != float64(604800) {
		t.Fatalf("requests %+v", seen)
	}
	// With the product's key, a file that does not verify is refused.
	c.options.ProductKeys = s.keys
	out, err = c.Checkout(context.Background(), CheckoutOptions{})
	if codeOf(t, err).Code != "checkout_invalid" || out.Verification == nil || !out.Verification.Has(CodeMalformed) {
		t.Fatalf("got %+v, %v", out, err)
	}
}

func TestCheckInNeedsTheLicensesID(t *testing.T) {
	valid := `{"valid":true,"code":"VALID","detail":"ok","license":{"serial":"LIC-1"},"activation":null}`
	notFound := `{"valid":false,"code":"NOT_FOUND","detail":"no such license","license":null,"activation":null}`
	checkedIn := `{"id":"33333333-3333-4333-8333-333333333333","serial":"LIC-1","status":"active","last_check_in_at":null}`
	s := newScripted(t, answer{status: 200, body: valid}, answer{status: 200, body: notFound}, answer{status: 200, body: checkedIn})
	if _, err := s.client(t, nil).CheckIn(context.Background()); !errors.Is(err, ErrNoLicenseID) {
		t.Fatalf("without a seat: %v", err)
	}
	failure := codeOf(t, func() error { _, err := s.client(t, nil).CheckIn(context.Background()); return err }())
	if failure.Code != "not_found" || failure.Offline() {
		t.Fatalf("for a license not found: %+v", failure)
	}
	c := s.client(t, func(o *ClientOptions) { o.LicenseID = "33333333-3333-4333-8333-333333333333" })
	if in, err := c.CheckIn(context.Background()); err != nil || in.LicenseID != "33333333-3333-4333-8333-333333333333" {
		t.Fatalf("with LicenseID: %+v, %v", in, err)
	}
	if path := s.requests()[2].path; path != "/v1/licenses/33333333-3333-4333-8333-333333333333/check-in" {
		t.Fatalf("asked %s", path)
	}
}

func TestStartAndStopHeartbeatConcurrently(t *testing.T) {
	var script []answer
	for i := 0; i < 200; i++ {
		script = append(script, answer{status: 200, body: seat})
	}
	s := newScripted(t, script...)
	c := s.client(t, func(o *ClientOptions) { o.Fingerprint = "machine-a"; o.HeartbeatInterval = 5 * time.Millisecond })
	if _, err := c.Activate(context.Background()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.StartHeartbeat(context.Background(), nil)
			_, _ = c.Validate(context.Background())
			c.StopHeartbeat()
		}()
	}
	wg.Wait()
	c.StopHeartbeat()
	stopped := len(s.requests())
	time.Sleep(50 * time.Millisecond)
	if len(s.requests()) != stopped {
		t.Fatal("a heartbeat goroutine outlived StopHeartbeat")
	}
}

func TestTimeOrderedUUID(t *testing.T) {
	at := time.UnixMilli(0x0123456789ab)
	id, err := TimeOrderedUUID(at)
	if err != nil || !strings.HasPrefix(id, "01234567-89ab-7") || !strings.ContainsAny(id[19:20], "89ab") {
		t.Fatalf("got %q, %v", id, err)
	}
}

// memoryStore keeps the state and the activation as a file would.
type memoryStore struct {
	mu         sync.Mutex
	state      *LicenseState
	activation *StoredActivation
}

func (m *memoryStore) LoadState() (*LicenseState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state, nil
}

func (m *memoryStore) SaveState(state LicenseState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state = &state
	return nil
}

func (m *memoryStore) LoadActivation() (*StoredActivation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.activation, nil
}

func (m *memoryStore) SaveActivation(activation *StoredActivation) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.activation = activation
	return nil
}
