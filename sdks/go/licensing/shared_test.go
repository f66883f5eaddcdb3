package licensing

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The transports of both clients, as NewClient and NewRelayClient set them up.
func transports(t *testing.T, url string) (online, relay *transport) {
	t.Helper()
	c, err := NewClient(ClientOptions{BaseURL: url, LicenseKey: "L", APIKey: "k", Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := ParsePublicKeyPEM(testPEM)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRelayClient(RelayOptions{RelayURL: url, PublicKey: keys, Fingerprint: "m", Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return &c.transport, &r.transport
}

// testPEM is an Ed25519 public key (RFC 8410). These tests never verify with it.
const testPEM = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n"

func TestTransportNamesWhyNoAnswerCame(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hang":
			<-r.Context().Done()
		case "/cut":
			conn, buf, _ := w.(http.Hijacker).Hijack()
			_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"a\"")
			_ = buf.Flush()
			_ = conn.Close()
		}
	}))
	defer server.Close()
	online, relay := transports(t, server.URL)
	for _, c := range []struct {
		name      string
		transport *transport
		// cancel cancels the caller's context while the request waits.
		cancel  bool
		path    string
		code    string
		message string
	}{
		{"online, timeout", online, false, "/hang", "timeout", "no answer within 100ms"},
		{"relay, timeout", relay, false, "/hang", "timeout", "no answer within 100ms"},
		{"online, canceled", online, true, "/hang", "canceled", "the context was canceled"},
		{"relay, canceled", relay, true, "/hang", "network", "the relay is unreachable: "},
		{"online, cut", online, false, "/cut", "network", "the licensing service is unreachable: "},
		{"relay, cut", relay, false, "/cut", "network", "the answer was cut: "},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		if c.cancel {
			time.AfterFunc(20*time.Millisecond, cancel)
		}
		_, err := c.transport.send(ctx, http.MethodGet, c.path, nil, "", "")
		cancel()
		var failure *ClientError
		if !errors.As(err, &failure) || failure.Code != c.code || failure.Status != 0 || !strings.HasPrefix(failure.Message, c.message) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	server.Close()
	for _, tr := range []*transport{online, relay} {
		_, err := tr.send(context.Background(), http.MethodGet, "/", nil, "", "")
		var failure *ClientError
		if !errors.As(err, &failure) || failure.Code != "network" || !strings.HasPrefix(failure.Message, tr.name+" is unreachable: ") {
			t.Errorf("%s, down: %v", tr.name, err)
		}
	}
	// A request that cannot be made is a plain error. The online client names it network.
	bad := &transport{http: &http.Client{}, baseURL: "http://a b", timeout: time.Second}
	if _, err := bad.send(context.Background(), http.MethodGet, "/", nil, "", ""); err == nil || errors.As(err, new(*ClientError)) {
		t.Errorf("bad URL: %v", err)
	}
	c, _ := NewClient(ClientOptions{BaseURL: "http://a b", LicenseKey: "L", APIKey: "k"})
	if failure, after := c.attempt(context.Background(), http.MethodGet, "/", nil, "k", false, nil); failure == nil || failure.Code != "network" || after >= 0 {
		t.Errorf("online client, bad URL: %v", failure)
	}
}

func TestTransportSendsAndReadsProblems(t *testing.T) {
	var headers http.Header
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers = r.Header.Clone()
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/coded":
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(503)
			_, _ = io.WriteString(w, `{"code":"unavailable","detail":"down","title":"Service Unavailable"}`)
		case "/titled":
			w.WriteHeader(403)
			_, _ = io.WriteString(w, `{"title":"Forbidden"}`)
		case "/bare":
			w.WriteHeader(418)
		case "/big":
			_, _ = io.WriteString(w, strings.Repeat("x", 4<<20+10))
		default:
			_, _ = w.Write(body)
		}
	}))
	defer server.Close()
	online, relay := transports(t, server.URL)
	// A busy machine may need more than 100 ms for 4 MiB.
	online.timeout, relay.timeout = 10*time.Second, 10*time.Second

	answer, err := online.send(context.Background(), http.MethodPost, "/echo", []byte(`{"a":1}`), "lt_x", "n1")
	if err != nil || answer.status != 200 || string(answer.body) != `{"a":1}` {
		t.Fatalf("echo: %+v, %v", answer, err)
	}
	if headers.Get("Authorization") != "Bearer lt_x" || headers.Get("Licensing-Nonce") != "n1" || headers.Get("Content-Type") != "application/json" || headers.Get("Accept") != "application/json" {
		t.Errorf("headers: %v", headers)
	}
	if _, err := relay.send(context.Background(), http.MethodGet, "/echo", nil, "", "n2"); err != nil || headers.Get("Authorization") != "" || headers.Get("Content-Type") != "" {
		t.Errorf("without credential and body: %v, %v", headers, err)
	}

	answer, err = online.send(context.Background(), http.MethodGet, "/coded", nil, "", "")
	var failure *ClientError
	if !errors.As(err, &failure) || failure.Code != "unavailable" || failure.Message != "down" || failure.Status != 503 || retryAfterOf(answer.header) != 3*time.Second {
		t.Errorf("coded: %v, %v", err, answer.header)
	}
	for path, want := range map[string]ClientError{
		"/titled": {Code: "http_403", Message: "Forbidden", Status: 403},
		"/bare":   {Code: "http_418", Message: "HTTP 418", Status: 418},
	} {
		_, err := relay.send(context.Background(), http.MethodGet, path, nil, "", "")
		if !errors.As(err, &failure) || *failure != want {
			t.Errorf("%s: %v", path, err)
		}
	}

	// The relay reads at most 4 MiB of an answer.
	if answer, err := relay.send(context.Background(), http.MethodGet, "/big", nil, "", ""); err != nil || len(answer.body) != 4<<20 {
		t.Errorf("relay, big answer: %d bytes, %v", len(answer.body), err)
	}
	if answer, err := online.send(context.Background(), http.MethodGet, "/big", nil, "", ""); err != nil || len(answer.body) != 4<<20+10 {
		t.Errorf("online, big answer: %d bytes, %v", len(answer.body), err)
	}
	if failure := (reply{status: 200, body: []byte("{")}).decode(new(map[string]any)); failure == nil || failure.Code != "invalid_answer" || failure.Status != 200 {
		t.Errorf("decode: %v", failure)
	}
}

func TestRelayValidateRidesAnOutage(t *testing.T) {
	keys, _ := ParsePublicKeyPEM(testPEM)
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c, err := NewRelayClient(RelayOptions{RelayURL: "http://127.0.0.1:1", PublicKey: keys, Fingerprint: "m", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	state, err := c.Validate(context.Background())
	if err != nil || state.Valid || state.Status != StatusUnknown || !state.Offline {
		t.Fatalf("no lease: %+v, %v", state, err)
	}
	c.lease = &RelayLease{ID: "l", ExpiresAt: "2030-01-01T00:00:10.000Z"}
	state, err = c.Validate(context.Background())
	if err != nil || !state.Valid || state.Status != StatusOK || !state.Offline || *state.GraceUntil != c.lease.ExpiresAt {
		t.Fatalf("a live lease: %+v, %v", state, err)
	}
}

func TestRelayHeartbeatDelayFollowsTheLease(t *testing.T) {
	keys, _ := ParsePublicKeyPEM(testPEM)
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c, err := NewRelayClient(RelayOptions{RelayURL: "http://x", PublicKey: keys, Fingerprint: "m", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if d := c.heartbeatDelay(); d != DefaultHeartbeatInterval {
		t.Fatalf("without a lease: %v", d)
	}
	for expires, want := range map[string]time.Duration{
		"2030-01-01T00:00:10.000Z": 5 * time.Second,
		"2030-01-01T00:00:00.400Z": 500 * time.Millisecond,
		"2030-01-02T00:00:00.000Z": DefaultHeartbeatInterval,
		"not a time":               DefaultHeartbeatInterval,
	} {
		c.lease = &RelayLease{ID: "l", ExpiresAt: expires}
		if d := c.heartbeatDelay(); d != want {
			t.Errorf("expiring %s: %v, want %v", expires, d, want)
		}
	}
}
