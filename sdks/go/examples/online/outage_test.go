package main

// The heartbeat goroutine and the grace period through a real outage of the platform.
// sdks/go/online.int-spec.ts starts the platform and sets LICENSING_URL, LICENSING_ADMIN_KEY and
// LICENSING_OUTAGE: two licenses of policies whose seats lapse 6 s after the last heartbeat, each
// with a license token (`lapsing` has no heartbeat grace, `reviving` a grace of 30 s). The clients
// reach the platform through a TCP relay that the test cuts: they get refused and reset
// connections, as when the service's host goes down.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/licensing-platform/licensing/sdks/go/licensing"
)

// relay copies bytes between the client and the platform, and never answers for the platform.
type relay struct {
	upstream string
	mu       sync.Mutex
	listener net.Listener
	conns    []net.Conn
	addr     string
}

func newRelay(t *testing.T, upstream string) *relay {
	r := &relay{upstream: upstream, addr: "127.0.0.1:0"}
	r.restore(t)
	t.Cleanup(r.cut)
	return r
}

// restore listens again, on the same port: the platform is back.
func (r *relay) restore(t *testing.T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.listener != nil {
		return
	}
	listener, err := net.Listen("tcp", r.addr)
	if err != nil {
		t.Fatalf("the relay cannot listen on %s: %v", r.addr, err)
	}
	r.listener, r.addr = listener, listener.Addr().String()
	go r.accept(listener)
}

// cut refuses new connections and drops the open ones.
func (r *relay) cut() {
	r.mu.Lock()
	listener, conns := r.listener, r.conns
	r.listener, r.conns = nil, nil
	r.mu.Unlock()
	if listener != nil {
		_ = listener.Close()
	}
	for _, conn := range conns {
		_ = conn.Close()
	}
}

func (r *relay) accept(listener net.Listener) {
	for {
		client, err := listener.Accept()
		if err != nil {
			return
		}
		upstream, err := net.DialTimeout("tcp", r.upstream, 5*time.Second)
		if err != nil {
			_ = client.Close()
			continue
		}
		r.mu.Lock()
		if r.listener != listener {
			r.mu.Unlock()
			_ = client.Close()
			_ = upstream.Close()
			return
		}
		r.conns = append(r.conns, client, upstream)
		r.mu.Unlock()
		pipe := func(to, from net.Conn) {
			_, _ = io.Copy(to, from)
			_ = to.Close()
			_ = from.Close()
		}
		go pipe(client, upstream)
		go pipe(upstream, client)
	}
}

// machine is one client of one license behind the relay, with what its heartbeat reported.
type machine struct {
	license  outageLicense
	client   *licensing.Client
	mu       sync.Mutex
	failures []error
}

type outageLicense struct {
	ID     string `json:"id"`
	Serial string `json:"serial"`
	Token  string `json:"token"`
}

func (m *machine) failed() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.failures)
}

func (m *machine) failure(i int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.failures[i]
}

// waitFor polls check until it holds, or fails the test after timeout.
func waitFor(t *testing.T, what string, timeout time.Duration, check func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// seatsOf lists a license's seats as an admin sees them, straight from the platform.
func seatsOf(t *testing.T, e map[string]string, licenseID string) []licensing.OnlineActivation {
	request, _ := http.NewRequest(http.MethodGet, e["LICENSING_URL"]+"/v1/activations?license_id="+licenseID, nil)
	request.Header.Set("Authorization", "Bearer "+e["LICENSING_ADMIN_KEY"])
	response, err := http.DefaultClient.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	var page struct {
		Activations []licensing.OnlineActivation `json:"activations"`
	}
	if err := json.NewDecoder(response.Body).Decode(&page); err != nil || response.StatusCode != 200 {
		t.Fatalf("seats of %s: %d %v", licenseID, response.StatusCode, err)
	}
	return page.Activations
}

func parseISO(t *testing.T, value *string) time.Time {
	t.Helper()
	if value == nil {
		t.Fatal("no time where one was due")
	}
	at, err := time.Parse(time.RFC3339Nano, *value)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

func expectState(t *testing.T, c *licensing.Client, valid bool, status licensing.StatusCode, offline bool) licensing.LicenseState {
	t.Helper()
	state, err := c.Validate(context.Background())
	if err != nil {
		t.Fatalf("validate raised %v, want the state %s", err, status)
	}
	if state.Valid != valid || state.Status != status || state.Offline != offline {
		t.Fatalf("validate: %+v, want valid %v, status %s, offline %v", state, valid, status, offline)
	}
	return state
}

func TestOutageAgainstThePlatform(t *testing.T) {
	e := env(t, "LICENSING_URL", "LICENSING_ADMIN_KEY", "LICENSING_OUTAGE")
	var licenses map[string]outageLicense
	if err := json.Unmarshal([]byte(e["LICENSING_OUTAGE"]), &licenses); err != nil {
		t.Fatal(err)
	}
	grace := 2 * time.Second
	r := newRelay(t, strings.TrimPrefix(e["LICENSING_URL"], "http://"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	newMachine := func(name, fingerprint string) *machine {
		m := &machine{license: licenses[name]}
		var err error
		m.client, err = licensing.NewClient(licensing.ClientOptions{
			BaseURL:            "http://" + r.addr,
			LicenseToken:       m.license.Token,
			LicenseKey:         m.license.Serial,
			Fingerprint:        fingerprint,
			Retries:            licensing.RetryCount(0),
			OfflineGracePeriod: &grace,
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	lapsing := newMachine("lapsing", "outage-machine-a")
	reviving := newMachine("reviving", "outage-machine-b")
	machines := []*machine{lapsing, reviving}
	for _, m := range machines {
		m := m
		if _, err := m.client.Activate(ctx); err != nil {
			t.Fatal(err)
		}
		onError := func(err error) {
			m.mu.Lock()
			m.failures = append(m.failures, err)
			m.mu.Unlock()
		}
		if err := m.client.StartHeartbeat(ctx, onError); err != nil {
			t.Fatal(err)
		}
		defer m.client.StopHeartbeat()
		expectState(t, m.client, true, licensing.StatusOK, false)
	}

	// A short outage. Validate answers the last-known state, marked offline, within the grace.
	r.cut()
	state := expectState(t, lapsing.client, true, licensing.StatusOK, true)
	if state.GraceUntil == nil || state.Detail == nil {
		t.Fatalf("an offline state without its grace or its reason: %+v", state)
	}
	// The next beat fails. The failure is kept and handed over; the goroutine goes on.
	waitFor(t, "a failed beat", 10*time.Second, func() bool { return lapsing.failed() > 0 })
	var failure *licensing.ClientError
	if !errors.As(lapsing.failure(0), &failure) || failure.Code != "network" || failure.Status != 0 || !failure.Offline() {
		t.Fatalf("the failed beat: %v", lapsing.failure(0))
	}
	if lapsing.client.HeartbeatError() == nil {
		t.Fatal("HeartbeatError() is nil after a failed beat")
	}
	// The platform comes back before the seat lapses: the next beat keeps the seat.
	r.restore(t)
	before := seatsOf(t, e, lapsing.license.ID)[0].LastHeartbeatAt
	waitFor(t, "the heartbeat to recover", 5*time.Second, func() bool { return lapsing.client.HeartbeatError() == nil })
	seats := seatsOf(t, e, lapsing.license.ID)
	if len(seats) != 1 || seats[0].ID != lapsing.client.CurrentActivation().ID || *seats[0].LastHeartbeatAt == *before {
		t.Fatalf("the seat after the outage: %+v", seats)
	}
	for _, m := range machines {
		expectState(t, m.client, true, licensing.StatusOK, false)
	}

	// A long outage: the grace runs out, then both seats lapse.
	r.cut()
	cutAt := time.Now()
	expectState(t, reviving.client, true, licensing.StatusOK, true)
	time.Sleep(time.Until(cutAt.Add(grace + 100*time.Millisecond)))
	lapseAt := time.Time{}
	for _, m := range machines {
		state := expectState(t, m.client, false, licensing.StatusOK, true)
		if !parseISO(t, state.GraceUntil).Before(time.Now()) {
			t.Fatalf("grace_until %s is not past", *state.GraceUntil)
		}
		if last, err := m.client.LastKnownState(); err != nil || last.Valid {
			t.Fatalf("the last-known state after the grace: %+v, %v", last, err)
		}
		if at := parseISO(t, m.client.CurrentActivation().ExpiresAt); at.After(lapseAt) {
			lapseAt = at
		}
	}
	time.Sleep(time.Until(lapseAt.Add(200 * time.Millisecond)))
	// A beat after the lapse failed too; the next one is a second away at least.
	failed := reviving.failed()
	waitFor(t, "a failed beat after the lapse", 3*time.Second, func() bool { return reviving.failed() > failed })
	for _, m := range machines {
		for i := 0; i < m.failed(); i++ {
			if !errors.As(m.failure(i), &failure) || failure.Code != "network" {
				t.Fatalf("a beat during the outage failed with %v", m.failure(i))
			}
		}
	}

	r.restore(t)
	// Within its policy's heartbeat grace, the seat says heartbeat_dead, and a beat revives it.
	expectState(t, reviving.client, false, licensing.StatusHeartbeatDead, false)
	waitFor(t, "the seat to revive", 5*time.Second, func() bool { return reviving.client.HeartbeatError() == nil })
	expectState(t, reviving.client, true, licensing.StatusOK, false)

	// Without a grace, the seat is gone: beats get 404 not_found, and the goroutine keeps going.
	waitFor(t, "the lapsed seat to be swept", 10*time.Second, func() bool { return len(seatsOf(t, e, lapsing.license.ID)) == 0 })
	waitFor(t, "a beat refused", 5*time.Second, func() bool {
		return errors.As(lapsing.client.HeartbeatError(), &failure) && failure.Status == 404
	})
	if failure.Code != "not_found" {
		t.Fatalf("the refused beat: %v", failure)
	}
	expectState(t, lapsing.client, false, licensing.StatusNoActivation, false)
	// Activating again takes a seat anew.
	if _, err := lapsing.client.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	expectState(t, lapsing.client, true, licensing.StatusOK, false)
	// The same goroutine keeps the new seat.
	waitFor(t, "a beat of the new seat", 5*time.Second, func() bool { return lapsing.client.HeartbeatError() == nil })
}
