package licensing

// The application's side of an on-premise relay: a floating seat leased over the site's network,
// with the seat methods of Client (Activate, Heartbeat, Deactivate, Validate). It holds no
// credential. It trusts the relay only as far as the product's public key vouches for it: the
// relay file from GET /v1/status must verify with that key, and every answer must carry a
// Licensing-Signature of the relay key that file names, over this request's fresh nonce.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// StatusNoSeats is a relay's: this machine holds no lease, and every seat is leased.
const StatusNoSeats StatusCode = "no_seats"

// The codes of a relay that does not prove itself (ClientError.Code).
const (
	// RelayFileInvalid: the relay file does not verify with the product key, or has no relay claim.
	RelayFileInvalid = "relay_file_invalid"
	// RelayProductMismatch: the relay file is for another product than RelayOptions.ProductID.
	RelayProductMismatch = "product_mismatch"
	// RelayFileExpired: the relay file has expired (also the relay's own 403 code).
	RelayFileExpired = "relay_file_expired"
	// UnverifiedAnswer: an answer without a valid signature of the relay key for this request.
	UnverifiedAnswer = "unverified_answer"
	// NotActivated: a lease call before Activate.
	NotActivated = "not_activated"
)

// RelayLease is a seat the relay leased to this machine.
type RelayLease struct {
	ID              string  `json:"id"`
	Fingerprint     string  `json:"fingerprint"`
	Name            *string `json:"name"`
	LeasedAt        string  `json:"leased_at"`
	LastHeartbeatAt string  `json:"last_heartbeat_at"`
	ExpiresAt       string  `json:"expires_at"`
}

// RelayStatus is GET /v1/status, with its relay file verified.
type RelayStatus struct {
	Site          string `json:"site"`
	Seats         int    `json:"seats"`
	SeatsInUse    int    `json:"seats_in_use"`
	LeaseSeconds  int    `json:"lease_seconds"`
	FileExpiresAt string `json:"file_expires_at"`
	Expired       bool   `json:"expired"`
	Revoked       bool   `json:"revoked"`
	ClockRewound  bool   `json:"clock_rewound"`
	RelayFile     string `json:"relay_file"`
	// License is the relay file's license, verified with the product public key.
	License *License `json:"-"`
}

// RelayOptions configures a RelayClient.
type RelayOptions struct {
	// RelayURL is the relay on the site's network, e.g. http://relay.plant4.local:8700.
	RelayURL string
	// PublicKey is the product's public key the application ships with.
	PublicKey *KeySet
	// ProductID is the product the relay file must be for (optional: the key pins the product).
	ProductID string
	// Fingerprint is this machine's: one machine holds one lease.
	Fingerprint string
	// Name is shown in the relay's lease list (at most 200 characters).
	Name string
	// Timeout is per request; zero means DefaultTimeout.
	Timeout time.Duration
	// HeartbeatInterval is the longest wait between two background heartbeats; zero means
	// DefaultHeartbeatInterval.
	HeartbeatInterval time.Duration
	// HTTPClient sends the requests; nil means a client of its own.
	HTTPClient *http.Client
	// Now is the clock (for tests); nil means time.Now.
	Now func() time.Time
}

// RelayClient leases a floating seat from a relay. It is safe for concurrent use.
//
// Its errors are *ClientError: the relay's problem codes (no_seats, license_revoked,
// relay_file_expired, clock_rewound, not_found), relay_file_invalid and product_mismatch,
// unverified_answer, not_activated, network and timeout.
type RelayClient struct {
	options   RelayOptions
	transport transport
	heartbeat heartbeat

	mu       sync.Mutex
	relayKey *KeySet
	lease    *RelayLease
}

// NewRelayClient checks the options.
func NewRelayClient(options RelayOptions) (*RelayClient, error) {
	if options.RelayURL == "" || options.PublicKey == nil || options.Fingerprint == "" {
		return nil, errors.New("licensing: RelayClient needs RelayURL, PublicKey and Fingerprint")
	}
	if options.Timeout == 0 {
		options.Timeout = DefaultTimeout
	}
	if options.HeartbeatInterval == 0 {
		options.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if options.Now == nil {
		options.Now = time.Now
	}
	client := options.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	return &RelayClient{options: options, transport: transport{
		http:    client,
		baseURL: strings.TrimRight(options.RelayURL, "/"),
		timeout: options.Timeout,
		name:    "the relay",
		limit:   4 << 20,
	}}, nil
}

// Status is the relay's status, its relay file verified with the product key.
// It fails with relay_file_invalid, product_mismatch or relay_file_expired for a file that does not
// hold, and unverified_answer for a status the relay that file names did not sign.
func (c *RelayClient) Status(ctx context.Context) (RelayStatus, error) {
	var status RelayStatus
	nonce, err := newNonce()
	if err != nil {
		return status, err
	}
	answer, err := c.transport.send(ctx, http.MethodGet, "/v1/status", nil, "", nonce)
	if err != nil {
		return status, err
	}
	if json.Unmarshal(answer.body, &status) != nil || status.RelayFile == "" {
		return status, &ClientError{Code: RelayFileInvalid, Message: "the status carries no relay file"}
	}
	verdict, err := VerifyLicense([]byte(status.RelayFile), c.options.PublicKey, LicenseOptions{Now: c.options.Now(), ProductID: c.options.ProductID})
	if err != nil {
		return status, err
	}
	onlyExpiry := len(verdict.Errors) > 0
	for _, e := range verdict.Errors {
		if e.Code != CodeExpired && e.Code != CodeFileExpired {
			onlyExpiry = false
		}
	}
	if verdict.Has(CodeProductMismatch) {
		return status, &ClientError{Code: RelayProductMismatch, Message: "the relay file is for another product"}
	}
	if onlyExpiry {
		return status, &ClientError{Code: RelayFileExpired, Message: "the relay file has expired"}
	}
	relayKey := relayKeyOf(status.RelayFile)
	if !verdict.Valid || verdict.License == nil || relayKey == nil {
		detail := joinCodes(verdict.Errors)
		if detail == "" {
			detail = "no relay claim"
		}
		return status, &ClientError{Code: RelayFileInvalid, Message: "the relay file does not verify with the product key (" + detail + ")"}
	}
	// The status itself must come from the relay that file names.
	if err := c.checkSignature(answer, nonce, relayKey); err != nil {
		return status, err
	}
	c.mu.Lock()
	c.relayKey = relayKey
	c.mu.Unlock()
	status.License = verdict.License
	return status, nil
}

// Activate leases a seat for this machine; a machine holding one gets it back, renewed.
func (c *RelayClient) Activate(ctx context.Context) (RelayLease, error) {
	body := map[string]string{"fingerprint": c.options.Fingerprint}
	if c.options.Name != "" {
		body["name"] = c.options.Name
	}
	var lease RelayLease
	if err := c.call(ctx, http.MethodPost, "/v1/leases", body, &lease); err != nil {
		return lease, err
	}
	c.mu.Lock()
	c.lease = &lease
	c.mu.Unlock()
	return lease, nil
}

// Heartbeat renews the lease now.
func (c *RelayClient) Heartbeat(ctx context.Context) (RelayLease, error) {
	var lease RelayLease
	held, err := c.requireLease()
	if err != nil {
		return lease, err
	}
	err = c.call(ctx, http.MethodPost, "/v1/leases/"+url.PathEscape(held.ID)+"/heartbeat", nil, &lease)
	c.mu.Lock()
	defer c.mu.Unlock()
	var failure *ClientError
	if errors.As(err, &failure) && failure.Code == "not_found" && c.lease != nil && c.lease.ID == held.ID {
		// The relay no longer knows the lease (it lapsed, or a revocation ended it).
		c.lease = nil
	}
	if err != nil {
		return lease, err
	}
	if c.lease != nil && c.lease.ID == held.ID {
		c.lease = &lease
	}
	return lease, nil
}

// StartHeartbeat heartbeats from a goroutine until StopHeartbeat, Deactivate or ctx ends: at half
// the lease's remaining lifetime, at most every HeartbeatInterval. A failed beat is kept in
// HeartbeatError and passed to onError (which may be nil).
func (c *RelayClient) StartHeartbeat(ctx context.Context, onError func(error)) error {
	if _, err := c.requireLease(); err != nil {
		return err
	}
	beat := func(ctx context.Context) error {
		_, err := c.Heartbeat(ctx)
		return err
	}
	c.heartbeat.start(ctx, c.heartbeatDelay, beat, onError)
	return nil
}

// StopHeartbeat stops the heartbeat goroutine and waits for it to end.
func (c *RelayClient) StopHeartbeat() { c.heartbeat.stop() }

// HeartbeatError is the last failed background heartbeat, cleared by the next successful one.
func (c *RelayClient) HeartbeatError() error { return c.heartbeat.lastError() }

// CurrentLease is the lease this client holds, or nil.
func (c *RelayClient) CurrentLease() *RelayLease {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lease == nil {
		return nil
	}
	lease := *c.lease
	return &lease
}

// Deactivate releases the seat and stops the heartbeat.
func (c *RelayClient) Deactivate(ctx context.Context) error {
	c.StopHeartbeat()
	held, err := c.requireLease()
	if err != nil {
		return err
	}
	if err := c.call(ctx, http.MethodDelete, "/v1/leases/"+url.PathEscape(held.ID), nil, nil); err != nil {
		return err
	}
	c.mu.Lock()
	c.lease = nil
	c.mu.Unlock()
	return nil
}

// Validate says whether the application may run: ok while this machine's lease lives and the
// relay's license holds. Otherwise revoked, expired (the relay file), no_seats (no lease, and every
// seat is taken), no_activation (no lease) or heartbeat_dead (the lease lapsed). When the relay
// cannot be reached, the lease carries the application until it expires (Offline true). It fails
// for a relay that does not prove itself (relay_file_invalid, product_mismatch, unverified_answer).
func (c *RelayClient) Validate(ctx context.Context) (LicenseState, error) {
	status, err := c.Status(ctx)
	if err != nil {
		var failure *ClientError
		if !errors.As(err, &failure) {
			return LicenseState{}, err
		}
		if failure.Code == RelayFileExpired {
			return c.state(StatusExpired, false, failure.Message), nil
		}
		if failure.Code == "network" || failure.Code == "timeout" || failure.Status == 429 || failure.Status >= 500 {
			if c.leaseLives() {
				return c.state(StatusOK, true, failure.Message), nil
			}
			return c.state(StatusUnknown, true, failure.Message), nil
		}
		return LicenseState{}, err
	}
	switch {
	case status.Revoked:
		return c.state(StatusRevoked, false, "the license is revoked"), nil
	case status.Expired:
		return c.state(StatusExpired, false, "the relay file has expired"), nil
	case c.CurrentLease() == nil && status.SeatsInUse >= status.Seats:
		return c.state(StatusNoSeats, false, "every seat is leased"), nil
	case c.CurrentLease() == nil:
		return c.state(StatusNoActivation, false, "this machine holds no lease: activate first"), nil
	case !c.leaseLives():
		return c.state(StatusHeartbeatDead, false, "the lease has lapsed"), nil
	}
	return c.state(StatusOK, false, ""), nil
}

func (c *RelayClient) state(status StatusCode, offline bool, detail string) LicenseState {
	state := LicenseState{Valid: status == StatusOK, Status: status, Offline: offline}
	if !offline {
		checked := isoOfMillis(c.options.Now().UnixMilli())
		state.CheckedAt = &checked
	}
	if lease := c.CurrentLease(); status == StatusOK && lease != nil {
		until := lease.ExpiresAt
		state.GraceUntil = &until
	}
	if detail != "" {
		state.Detail = &detail
	}
	return state
}

func (c *RelayClient) leaseLives() bool {
	lease := c.CurrentLease()
	if lease == nil {
		return false
	}
	expires, err := time.Parse(time.RFC3339Nano, lease.ExpiresAt)
	return err == nil && expires.After(c.options.Now())
}

func (c *RelayClient) heartbeatDelay() time.Duration {
	expiresAt := ""
	if lease := c.CurrentLease(); lease != nil {
		expiresAt = lease.ExpiresAt
	}
	return heartbeatDelay(expiresAt, c.options.Now(), c.options.HeartbeatInterval, 500*time.Millisecond)
}

func (c *RelayClient) requireLease() (RelayLease, error) {
	lease := c.CurrentLease()
	if lease == nil {
		return RelayLease{}, &ClientError{Code: NotActivated, Message: "this machine holds no lease: activate first", Err: ErrNoActivation}
	}
	return *lease, nil
}

// call is a lease call: the relay proven first (once), the answer's signature checked, its JSON
// decoded into out (when out is not nil).
func (c *RelayClient) call(ctx context.Context, method, path string, body any, out any) error {
	c.mu.Lock()
	relayKey := c.relayKey
	c.mu.Unlock()
	if relayKey == nil {
		if _, err := c.Status(ctx); err != nil {
			return err
		}
		c.mu.Lock()
		relayKey = c.relayKey
		c.mu.Unlock()
	}
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return err
		}
	}
	nonce, err := newNonce()
	if err != nil {
		return err
	}
	// Problems are not signed: they can only refuse, never grant.
	answer, err := c.transport.send(ctx, method, path, payload, "", nonce)
	if err != nil {
		return err
	}
	if err := c.checkSignature(answer, nonce, relayKey); err != nil {
		return err
	}
	if out != nil {
		if failure := answer.decode(out); failure != nil {
			return failure
		}
	}
	return nil
}

func (c *RelayClient) checkSignature(answer reply, nonce string, relayKey *KeySet) error {
	verdict, err := VerifySignedAnswer(SignedAnswer{Body: answer.body, Signature: answer.header.Get("Licensing-Signature"), Nonce: nonce}, relayKey, SignedAnswerOptions{Now: c.options.Now()})
	if err != nil {
		return err
	}
	if !verdict.Valid {
		return &ClientError{Code: UnverifiedAnswer, Message: "the answer is not signed by the relay for this request (" + joinCodes(verdict.Errors) + "): it counts as no answer", Status: answer.status}
	}
	return nil
}

// relayKeyOf is the relay.public_key claim of a relay file, read after it verified.
func relayKeyOf(file string) *KeySet {
	decoded, _, ok := decodeLicense([]byte(file))
	if !ok {
		return nil
	}
	relay, ok := decoded.payload["relay"].(map[string]any)
	if !ok {
		return nil
	}
	pem, ok := relay["public_key"].(string)
	if !ok || pem == "" {
		return nil
	}
	keys, err := ParsePublicKeyPEM(pem)
	if err != nil {
		return nil
	}
	return keys
}
