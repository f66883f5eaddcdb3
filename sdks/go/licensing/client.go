package licensing

// The application's online side: validate, seats (activate, heartbeat, deactivate), check-in,
// checkout, revocation checks and sync, over net/http.
// It behaves like the JavaScript SDK's LicenseClient, with the same vocabulary.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	mathrand "math/rand"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// StatusCode is how the service last described the license: validate's codes, lowercased.
type StatusCode string

// The status codes. Any code the client does not know is StatusUnknown. StatusOK and StatusOverage
// (more machines than seats, which the license's policy allows) let the application run.
const (
	StatusOK                  StatusCode = "ok"
	StatusOverage             StatusCode = "overage"
	StatusRevoked             StatusCode = "revoked"
	StatusSuspended           StatusCode = "suspended"
	StatusExpired             StatusCode = "expired"
	StatusNotFound            StatusCode = "not_found"
	StatusFingerprintMismatch StatusCode = "fingerprint_mismatch"
	StatusNoActivation        StatusCode = "no_activation"
	StatusHeartbeatDead       StatusCode = "heartbeat_dead"
	StatusComponentsMismatch  StatusCode = "components_mismatch"
	StatusOverdue             StatusCode = "overdue"
	StatusEntitlementsMissing StatusCode = "entitlements_missing"
	StatusUnknown             StatusCode = "unknown"
)

// Runs reports whether the status lets the application run.
func (s StatusCode) Runs() bool { return s == StatusOK || s == StatusOverage }

// The defaults of ClientOptions.
const (
	DefaultTimeout            = 10 * time.Second
	DefaultRetries            = 2
	DefaultRetryDelay         = 500 * time.Millisecond
	DefaultOfflineGracePeriod = 7 * 24 * time.Hour
	DefaultHeartbeatInterval  = 5 * time.Minute
)

// maxRetryAfter caps how long a Retry-After header makes the client wait.
const maxRetryAfter = 30 * time.Second

// LicenseState is what the client knows of the license.
// It marshals to the same JSON as the JavaScript SDK's LicenseState.
type LicenseState struct {
	// Valid says whether the application may run.
	// It is true when the last answer was ok, and it is fresh or within the grace period.
	Valid  bool       `json:"valid"`
	Status StatusCode `json:"status"`
	// Offline is true when the service could not be reached and this is the last-known state.
	Offline bool `json:"offline"`
	// CheckedAt is when the service last answered (ISO 8601), nil if it never has.
	CheckedAt *string `json:"checked_at"`
	// GraceUntil is until when a last-known ok counts while offline, nil if there is none.
	GraceUntil *string `json:"grace_until"`
	// Detail is the service's explanation, or why it could not be reached.
	Detail *string `json:"detail"`
}

// OnlineActivation is a machine's seat, as the service answers it.
// (Activation is an air-gapped machine's activation file.)
type OnlineActivation struct {
	ID              string            `json:"id"`
	LicenseID       string            `json:"license_id"`
	Fingerprint     string            `json:"fingerprint"`
	Hostname        *string           `json:"hostname"`
	Platform        *string           `json:"platform"`
	Components      map[string]string `json:"components"`
	CreatedAt       string            `json:"created_at"`
	LastHeartbeatAt *string           `json:"last_heartbeat_at"`
	ExpiresAt       *string           `json:"expires_at"`
}

// RevocationResult is the status of one serial.
// Status is active, revoked, suspended, expired or not_found.
type RevocationResult struct {
	Serial    string  `json:"serial"`
	Status    string  `json:"status"`
	RevokedAt *string `json:"revoked_at"`
}

// SyncReport is what a sync reports.
type SyncReport struct {
	FeaturesUsed []string `json:"features_used,omitempty"`
	SeatsInUse   *int     `json:"seats_in_use,omitempty"`
	// ReportID names the report. Empty means a new one (a time-ordered UUID).
	// Every retry of one Sync sends the same id, so the service counts the report once.
	ReportID string `json:"report_id,omitempty"`
}

// CheckIn is the license as a check-in answers it.
type CheckIn struct {
	LicenseID     string  `json:"id"`
	Serial        string  `json:"serial"`
	Status        string  `json:"status"`
	LastCheckInAt *string `json:"last_check_in_at"`
}

// Checkout is a checked-out license file.
type Checkout struct {
	// LicenseBlob is the file as the API answers it: base64 of its bytes.
	LicenseBlob string `json:"license_blob"`
	// IssuedAt is when the file was signed; ExpiresAt is when it stops verifying (ISO 8601).
	IssuedAt  string `json:"issued_at"`
	ExpiresAt string `json:"expires_at"`
	// File is the license file itself: the decoded blob.
	File []byte `json:"-"`
	// Verification is the offline verdict with ClientOptions.ProductKeys, nil without them.
	Verification *LicenseResult `json:"-"`
}

// CheckoutOptions says how long a checked-out file lives.
type CheckoutOptions struct {
	// TTL is how long the file stays valid, in whole seconds.
	// Zero means the organization's default (30 days unless changed).
	TTL time.Duration
}

// StoredActivation is this machine's activation as the client keeps it between runs.
type StoredActivation struct {
	// LicenseKey is the serial it is an activation of.
	LicenseKey string           `json:"license_key"`
	Activation OnlineActivation `json:"activation"`
	// MachineToken is its machine token (mt_…), nil when an API key activated.
	// It is a secret: keep it like a password.
	MachineToken *string `json:"machine_token"`
}

// StateStore keeps the last-known state between runs (a file, say).
// LoadState answers nil when there is none.
type StateStore interface {
	LoadState() (*LicenseState, error)
	SaveState(state LicenseState) error
}

// ActivationStore keeps the activation between runs.
// A restart then heartbeats and deactivates without activating.
// A StateStore may also be an ActivationStore.
// SaveActivation is called with nil once the seat is given back.
type ActivationStore interface {
	LoadActivation() (*StoredActivation, error)
	SaveActivation(activation *StoredActivation) error
}

// ClientOptions configures a Client.
type ClientOptions struct {
	// BaseURL is the licensing API, for example https://licensing.example.com.
	BaseURL string
	// LicenseToken is the license's own token (lt_…).
	// An admin creates it with POST /v1/licenses/:id/tokens.
	// It is the recommended credential: it reaches this license only.
	// Give it or APIKey, not both.
	LicenseToken string
	// APIKey is an API key with the client scope.
	// One key is shared by the whole fleet: prefer LicenseToken.
	// Only an API key may check revocation.
	APIKey string
	// LicenseKey is the license key: its serial.
	LicenseKey string
	// LicenseID is the license's id, for check-in and a license's checkout without a seat.
	// It is optional: the seat, or a validate that finds the seat, tells it too.
	LicenseID string
	// Fingerprint is this machine's, for seats and node-locked licenses.
	Fingerprint string
	Hostname    string
	Platform    string
	Components  map[string]string
	AppVersion  string
	// Timeout is per attempt; zero means DefaultTimeout (10 s).
	Timeout time.Duration
	// Retries is how many further attempts follow a network failure, a timeout, a 429 or a 5xx.
	// Nil means DefaultRetries (2). Use RetryCount(0) for none.
	Retries *int
	// RetryDelay is the first backoff delay, doubled each retry, with jitter.
	// Zero means DefaultRetryDelay (500 ms).
	RetryDelay time.Duration
	// OfflineGracePeriod is how long a last-known ok keeps the application running while offline.
	// Nil means DefaultOfflineGracePeriod (7 days).
	OfflineGracePeriod *time.Duration
	// HeartbeatInterval is the heartbeat period when the activation does not dictate one.
	// Zero means DefaultHeartbeatInterval (5 minutes).
	HeartbeatInterval time.Duration
	// Store keeps the last-known state, and the activation when it is also an ActivationStore.
	Store StateStore
	// ResponseKeys are the organization's response keys (GET /v1/organizations/current/response-keys).
	// With them, validate, sync and check-revocation ask for a signed answer, with a fresh nonce.
	// An answer whose signature does not verify is an error, never a state.
	ResponseKeys *KeySet
	// ProductKeys is the product's public key. With it, Checkout verifies the file offline.
	ProductKeys *KeySet
	// HTTPClient sends the requests; nil means a client of its own.
	HTTPClient *http.Client
	// Now is the clock, for tests; nil means time.Now.
	Now func() time.Time
}

// RetryCount returns a pointer to n, for ClientOptions.Retries.
func RetryCount(n int) *int { return &n }

// ClientError is a request the service refused, or one that could not be sent.
type ClientError struct {
	// Code is the problem's code.
	// It is network or timeout when the service was not reached.
	// It is a signed answer's error code (unsigned, signature_invalid, ...) when the signature fails.
	Code string
	// Message is for people.
	Message string
	// Status is the HTTP status, 0 when there was no answer.
	Status int
	// Err is the cause, when there is one (a context's error, say).
	Err error
}

func (e *ClientError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("licensing: %s: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("licensing: %d %s: %s", e.Status, e.Code, e.Message)
}

// Unwrap answers the cause.
func (e *ClientError) Unwrap() error { return e.Err }

// Offline says the service was not reached or not able to answer: a retry later may succeed.
func (e *ClientError) Offline() bool {
	return e.Status == 0 || e.Status == 429 || e.Status >= 500
}

// ErrNoActivation is returned by calls that need a seat, before Activate.
var ErrNoActivation = errors.New("licensing: activate first")

// ErrNoLicenseID is returned by CheckIn and Checkout when the license's id is not known:
// set ClientOptions.LicenseID, or Activate first.
var ErrNoLicenseID = errors.New("licensing: the license's id is not known: set ClientOptions.LicenseID or activate first")

// ErrNoFingerprint is returned by calls that need ClientOptions.Fingerprint.
var ErrNoFingerprint = errors.New("licensing: this call needs ClientOptions.Fingerprint")

// Client is the online client. It is safe for concurrent use.
type Client struct {
	options    ClientOptions
	transport  transport
	heartbeat  heartbeat
	credential string
	retries    int
	retryDelay time.Duration
	grace      time.Duration
	interval   time.Duration
	now        func() time.Time

	mu               sync.Mutex
	state            *LicenseState
	stateLoaded      bool
	activation       *OnlineActivation
	activationLoaded bool
	machineToken     string
	licenseID        string
}

// NewClient checks the options and makes a client.
func NewClient(options ClientOptions) (*Client, error) {
	if options.BaseURL == "" || options.LicenseKey == "" || (options.LicenseToken == "") == (options.APIKey == "") {
		return nil, fmt.Errorf("%w: a client needs BaseURL, LicenseKey, and either LicenseToken or APIKey (not both)", ErrInvalidOptions)
	}
	c := &Client{
		options: options,
		transport: transport{
			http:          options.HTTPClient,
			baseURL:       strings.TrimRight(options.BaseURL, "/"),
			timeout:       DefaultTimeout,
			name:          "the licensing service",
			contextErrors: true,
		},
		credential: options.LicenseToken + options.APIKey,
		retries:    DefaultRetries,
		retryDelay: DefaultRetryDelay,
		grace:      DefaultOfflineGracePeriod,
		interval:   DefaultHeartbeatInterval,
		now:        options.Now,
	}
	if options.Timeout > 0 {
		c.transport.timeout = options.Timeout
	}
	if options.Retries != nil {
		if *options.Retries < 0 {
			return nil, fmt.Errorf("%w: Retries is negative", ErrInvalidOptions)
		}
		c.retries = *options.Retries
	}
	if options.RetryDelay > 0 {
		c.retryDelay = options.RetryDelay
	}
	if options.OfflineGracePeriod != nil {
		c.grace = *options.OfflineGracePeriod
	}
	if options.HeartbeatInterval > 0 {
		c.interval = options.HeartbeatInterval
	}
	if c.transport.http == nil {
		c.transport.http = &http.Client{}
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// Validate asks the service whether the license is valid.
// With a fingerprint, it also asks about this machine's seat.
// An outage is not an error: the last-known state answers, within the grace period.
func (c *Client) Validate(ctx context.Context) (LicenseState, error) {
	body := map[string]any{"key": c.options.LicenseKey}
	if c.options.Fingerprint != "" {
		body["fingerprint"] = c.options.Fingerprint
	}
	if c.options.Components != nil {
		body["components"] = c.options.Components
	}
	if err := c.loadActivation(); err != nil {
		return LicenseState{}, err
	}
	return c.answered(func() (StatusCode, *string, error) {
		var result struct {
			Code       string `json:"code"`
			Detail     string `json:"detail"`
			Activation *struct {
				LicenseID string `json:"license_id"`
			} `json:"activation"`
		}
		if err := c.asMachine(ctx, http.MethodPost, "/v1/licenses/validate", body, true, &result); err != nil {
			return "", nil, err
		}
		if result.Activation != nil && result.Activation.LicenseID != "" {
			c.mu.Lock()
			c.licenseID = result.Activation.LicenseID
			c.mu.Unlock()
		}
		return statusOfCode(result.Code), &result.Detail, nil
	})
}

// Sync sends a usage report and learns the license's current status.
// It is the call that makes a revocation take effect in the application.
// Every attempt sends the same report_id, so a report that got through before a timeout counts once.
// An outage is not an error (see Validate).
func (c *Client) Sync(ctx context.Context, report SyncReport) (LicenseState, error) {
	if report.ReportID == "" {
		id, err := TimeOrderedUUID(c.now())
		if err != nil {
			return LicenseState{}, err
		}
		report.ReportID = id
	}
	body := map[string]any{"license_serial": c.options.LicenseKey, "report_id": report.ReportID}
	if c.options.Fingerprint != "" {
		body["hardware_fingerprint"] = c.options.Fingerprint
	}
	if c.options.AppVersion != "" {
		body["app_version"] = c.options.AppVersion
	}
	if report.FeaturesUsed != nil {
		body["features_used"] = report.FeaturesUsed
	}
	if report.SeatsInUse != nil {
		body["seats_in_use"] = *report.SeatsInUse
	}
	if err := c.loadActivation(); err != nil {
		return LicenseState{}, err
	}
	return c.answered(func() (StatusCode, *string, error) {
		var result struct {
			Status  string  `json:"status"`
			Message *string `json:"message"`
		}
		if err := c.asMachine(ctx, http.MethodPost, "/v1/licenses/sync", body, true, &result); err != nil {
			return "", nil, err
		}
		return statusOfCode(result.Status), result.Message, nil
	})
}

// CheckRevocation answers the revocation status of serials (default: this license's).
// It needs an API key.
// A license token is refused (403 forbidden): Validate and Sync tell its license's status.
func (c *Client) CheckRevocation(ctx context.Context, serials ...string) ([]RevocationResult, error) {
	if len(serials) == 0 {
		serials = []string{c.options.LicenseKey}
	}
	var result struct {
		Results []RevocationResult `json:"results"`
	}
	err := c.request(ctx, http.MethodPost, "/v1/licenses/check-revocation", map[string]any{"serials": serials}, "", true, &result)
	return result.Results, err
}

// Activate takes (or finds again) this machine's seat.
// With a license token the service also answers a machine token.
// The client keeps it (and stores it) for this seat's later calls.
// Each Activate gets a new one, and the previous one stops working.
func (c *Client) Activate(ctx context.Context) (OnlineActivation, error) {
	if c.options.Fingerprint == "" {
		return OnlineActivation{}, ErrNoFingerprint
	}
	body := map[string]any{"license_key": c.options.LicenseKey, "fingerprint": c.options.Fingerprint}
	if c.options.Hostname != "" {
		body["hostname"] = c.options.Hostname
	}
	if c.options.Platform != "" {
		body["platform"] = c.options.Platform
	}
	if c.options.Components != nil {
		body["components"] = c.options.Components
	}
	var result struct {
		OnlineActivation
		MachineToken *string `json:"machine_token"`
	}
	if err := c.request(ctx, http.MethodPost, "/v1/activations", body, "", false, &result); err != nil {
		return OnlineActivation{}, err
	}
	activation := result.OnlineActivation
	c.mu.Lock()
	// This answer replaces whatever a store held: loading it later must not bring the old one back.
	c.activationLoaded = true
	c.activation = &activation
	c.licenseID = activation.LicenseID
	c.machineToken = ""
	if result.MachineToken != nil {
		c.machineToken = *result.MachineToken
	}
	c.mu.Unlock()
	return activation, c.saveActivation()
}

// Heartbeat keeps the seat: one heartbeat now.
// After a restart it loads the stored activation.
func (c *Client) Heartbeat(ctx context.Context) (OnlineActivation, error) {
	if err := c.loadActivation(); err != nil {
		return OnlineActivation{}, err
	}
	id, err := c.activationID()
	if err != nil {
		return OnlineActivation{}, err
	}
	var activation OnlineActivation
	if err := c.asMachine(ctx, http.MethodPost, "/v1/activations/"+url.PathEscape(id)+"/heartbeat", nil, false, &activation); err != nil {
		return OnlineActivation{}, err
	}
	c.mu.Lock()
	if c.activation != nil && c.activation.ID == activation.ID {
		c.activation = &activation
	}
	c.mu.Unlock()
	return activation, nil
}

// StartHeartbeat heartbeats in a goroutine until ctx ends, StopHeartbeat, or Deactivate.
// It beats at half the activation's remaining lifetime when it has one, else every HeartbeatInterval.
// A failed beat goes to onError (when not nil) and to HeartbeatError, and is retried at the next tick.
// Calling it again replaces the running heartbeat.
func (c *Client) StartHeartbeat(ctx context.Context, onError func(error)) error {
	if err := c.loadActivation(); err != nil {
		return err
	}
	if _, err := c.activationID(); err != nil {
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
func (c *Client) StopHeartbeat() { c.heartbeat.stop() }

// HeartbeatError is the last failed background heartbeat, cleared by the next successful one.
func (c *Client) HeartbeatError() error { return c.heartbeat.lastError() }

// Deactivate frees the seat and stops the heartbeat.
func (c *Client) Deactivate(ctx context.Context) error {
	c.StopHeartbeat()
	if err := c.loadActivation(); err != nil {
		return err
	}
	id, err := c.activationID()
	if err != nil {
		return err
	}
	if err := c.asMachine(ctx, http.MethodDelete, "/v1/activations/"+url.PathEscape(id), nil, false, nil); err != nil {
		return err
	}
	c.mu.Lock()
	c.activation, c.machineToken = nil, ""
	c.mu.Unlock()
	return c.saveActivation()
}

// CheckIn records that the application is in touch now.
// A license whose policy sets a check-in interval validates as overdue without one.
// It needs the license's id: ClientOptions.LicenseID, the seat's, or one a validate found.
// Without any, CheckIn validates first: a seat of this machine tells it.
func (c *Client) CheckIn(ctx context.Context) (CheckIn, error) {
	id, err := c.licenseIDOf(ctx)
	if err != nil {
		return CheckIn{}, err
	}
	var result CheckIn
	err = c.request(ctx, http.MethodPost, "/v1/licenses/"+url.PathEscape(id)+"/check-in", nil, "", false, &result)
	return result, err
}

// Checkout answers a checked-out license file, for a time without the network.
// With an activation, the file is the activation's: bound to this machine's fingerprint.
// Without one, it is the license's.
// With ClientOptions.ProductKeys, the file is verified offline.
// A file that does not verify is answered with a *ClientError of code checkout_invalid.
func (c *Client) Checkout(ctx context.Context, options CheckoutOptions) (Checkout, error) {
	body := map[string]any{}
	if options.TTL > 0 {
		body["ttl_seconds"] = int64(options.TTL / time.Second)
	}
	if err := c.loadActivation(); err != nil {
		return Checkout{}, err
	}
	var result Checkout
	fingerprint := ""
	if id, err := c.activationID(); err == nil {
		fingerprint = c.options.Fingerprint
		err = c.asMachine(ctx, http.MethodPost, "/v1/activations/"+url.PathEscape(id)+"/checkout", body, false, &result)
		if err != nil {
			return Checkout{}, err
		}
	} else {
		id, err := c.licenseIDOf(ctx)
		if err != nil {
			return Checkout{}, err
		}
		if err := c.request(ctx, http.MethodPost, "/v1/licenses/"+url.PathEscape(id)+"/checkout", body, "", false, &result); err != nil {
			return Checkout{}, err
		}
	}
	file, err := base64.StdEncoding.DecodeString(result.LicenseBlob)
	if err != nil {
		return Checkout{}, &ClientError{Code: "checkout_invalid", Message: "the license_blob is not base64", Status: 200, Err: err}
	}
	result.File = file
	if c.options.ProductKeys == nil {
		return result, nil
	}
	verdict, err := VerifyLicense(file, c.options.ProductKeys, LicenseOptions{Now: c.now(), Fingerprint: fingerprint})
	if err != nil {
		return Checkout{}, err
	}
	result.Verification = &verdict
	if !verdict.Valid {
		return result, &ClientError{Code: "checkout_invalid", Message: "the checked-out file does not verify: " + joinCodes(verdict.Errors), Status: 200}
	}
	return result, nil
}

// LastKnownState answers the last-known state without asking the service.
// The grace period is applied as of now.
func (c *Client) LastKnownState() (LicenseState, error) {
	if err := c.loadState(); err != nil {
		return LicenseState{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var detail *string
	if c.state != nil {
		detail = c.state.Detail
	}
	return c.offlineStateLocked(detail), nil
}

// CurrentActivation answers the activation the client holds, nil before Activate.
func (c *Client) CurrentActivation() *OnlineActivation {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.activation == nil {
		return nil
	}
	copied := *c.activation
	return &copied
}

func (c *Client) activationID() (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.activation == nil {
		return "", ErrNoActivation
	}
	return c.activation.ID, nil
}

func (c *Client) licenseIDOf(ctx context.Context) (string, error) {
	if err := c.loadActivation(); err != nil {
		return "", err
	}
	c.mu.Lock()
	id := c.licenseID
	c.mu.Unlock()
	if id == "" {
		id = c.options.LicenseID
	}
	if id != "" {
		return id, nil
	}
	state, err := c.Validate(ctx)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	id = c.licenseID
	c.mu.Unlock()
	if id != "" {
		return id, nil
	}
	if state.Status == StatusNotFound {
		detail := "the license does not exist"
		if state.Detail != nil {
			detail = *state.Detail
		}
		return "", &ClientError{Code: string(state.Status), Message: detail, Status: http.StatusOK}
	}
	return "", ErrNoLicenseID
}

func (c *Client) heartbeatDelay() time.Duration {
	expiresAt := ""
	c.mu.Lock()
	if c.activation != nil && c.activation.ExpiresAt != nil {
		expiresAt = *c.activation.ExpiresAt
	}
	c.mu.Unlock()
	return heartbeatDelay(expiresAt, c.now(), c.interval, time.Second)
}

// answered turns an answer into the new state, and an outage into the last-known state.
func (c *Client) answered(ask func() (StatusCode, *string, error)) (LicenseState, error) {
	if err := c.loadState(); err != nil {
		return LicenseState{}, err
	}
	status, detail, err := ask()
	if err != nil {
		var failure *ClientError
		if !errors.As(err, &failure) || !failure.Offline() {
			return LicenseState{}, err
		}
		message := failure.Message
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.offlineStateLocked(&message), nil
	}
	checkedAt := c.now()
	checked := isoOfMillis(checkedAt.UnixMilli())
	state := LicenseState{Valid: status.Runs(), Status: status, CheckedAt: &checked, Detail: detail}
	if status.Runs() {
		grace := isoOfMillis(checkedAt.Add(c.grace).UnixMilli())
		state.GraceUntil = &grace
	}
	c.mu.Lock()
	c.state = &state
	c.mu.Unlock()
	if c.options.Store != nil {
		if err := c.options.Store.SaveState(state); err != nil {
			return state, err
		}
	}
	return state, nil
}

func (c *Client) offlineStateLocked(detail *string) LicenseState {
	last := c.state
	if last == nil || last.CheckedAt == nil {
		return LicenseState{Status: StatusUnknown, Offline: true, Detail: detail}
	}
	state := LicenseState{Status: last.Status, Offline: true, CheckedAt: last.CheckedAt, Detail: detail}
	checkedAt, err := time.Parse(time.RFC3339Nano, *last.CheckedAt)
	if last.Status.Runs() && err == nil {
		graceUntil := checkedAt.Add(c.grace)
		grace := isoOfMillis(graceUntil.UnixMilli())
		state.GraceUntil = &grace
		state.Valid = c.now().Before(graceUntil)
	}
	return state
}

func (c *Client) loadState() error {
	c.mu.Lock()
	if c.stateLoaded {
		c.mu.Unlock()
		return nil
	}
	c.stateLoaded = true
	c.mu.Unlock()
	if c.options.Store == nil {
		return nil
	}
	stored, err := c.options.Store.LoadState()
	if err != nil || stored == nil || stored.CheckedAt == nil || stored.Status == "" {
		return err
	}
	c.mu.Lock()
	if c.state == nil {
		c.state = stored
	}
	c.mu.Unlock()
	return nil
}

func (c *Client) activationStore() ActivationStore {
	store, _ := c.options.Store.(ActivationStore)
	return store
}

// loadActivation loads the stored activation, once.
// It keeps it only if it is this license's on this machine (the options may have changed).
func (c *Client) loadActivation() error {
	c.mu.Lock()
	if c.activationLoaded {
		c.mu.Unlock()
		return nil
	}
	c.activationLoaded = true
	c.mu.Unlock()
	store := c.activationStore()
	if store == nil {
		return nil
	}
	stored, err := store.LoadActivation()
	if err != nil || stored == nil || stored.Activation.ID == "" {
		return err
	}
	if stored.LicenseKey != c.options.LicenseKey || stored.Activation.Fingerprint != c.options.Fingerprint {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.activation != nil {
		return nil
	}
	activation := stored.Activation
	c.activation = &activation
	c.licenseID = activation.LicenseID
	if stored.MachineToken != nil {
		c.machineToken = *stored.MachineToken
	}
	return nil
}

func (c *Client) saveActivation() error {
	store := c.activationStore()
	if store == nil {
		return nil
	}
	c.mu.Lock()
	var stored *StoredActivation
	if c.activation != nil {
		stored = &StoredActivation{LicenseKey: c.options.LicenseKey, Activation: *c.activation}
		if c.machineToken != "" {
			token := c.machineToken
			stored.MachineToken = &token
		}
	}
	c.mu.Unlock()
	return store.SaveActivation(stored)
}

// asMachine is a call for this machine's seat.
// It carries the machine token when the client holds one, else the license token or API key.
// A 401 to the machine token means the activation ended, or another Activate replaced the token.
// The client then drops the token and asks again with its own credential: that answer counts.
func (c *Client) asMachine(ctx context.Context, method, path string, body any, signed bool, out any) error {
	c.mu.Lock()
	token := c.machineToken
	c.mu.Unlock()
	if token == "" {
		return c.request(ctx, method, path, body, "", signed, out)
	}
	err := c.request(ctx, method, path, body, token, signed, out)
	var failure *ClientError
	if err == nil || !errors.As(err, &failure) || failure.Status != http.StatusUnauthorized {
		return err
	}
	c.mu.Lock()
	dropped := c.machineToken == token
	if dropped {
		c.machineToken = ""
	}
	c.mu.Unlock()
	if dropped {
		if err := c.saveActivation(); err != nil {
			return err
		}
	}
	return c.request(ctx, method, path, body, "", signed, out)
}

// request is one call with timeouts and retries.
// It decodes the JSON body of a 2xx into out.
// An empty credential means the client's license token or API key.
// With signed and ResponseKeys, it asks for a signed answer and checks it.
func (c *Client) request(ctx context.Context, method, path string, body any, credential string, signed bool, out any) error {
	if credential == "" {
		credential = c.credential
	}
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return err
		}
	}
	for attempt := 0; ; attempt++ {
		failure, retryAfter := c.attempt(ctx, method, path, payload, credential, signed, out)
		if failure == nil {
			return nil
		}
		if !failure.Offline() || attempt >= c.retries || ctx.Err() != nil {
			return failure
		}
		delay := retryAfter
		if delay < 0 {
			backoff := float64(c.retryDelay) * math.Pow(2, float64(attempt))
			delay = time.Duration(backoff/2 + mathrand.Float64()*(backoff/2))
		}
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return contextFailure(ctx, ctx.Err())
		case <-timer.C:
		}
	}
}

// attempt sends one request; retryAfter is negative when the answer named no Retry-After.
func (c *Client) attempt(ctx context.Context, method, path string, payload []byte, credential string, signed bool, out any) (failure *ClientError, retryAfter time.Duration) {
	nonce := ""
	if signed && c.options.ResponseKeys != nil {
		var err error
		if nonce, err = newNonce(); err != nil {
			return &ClientError{Code: "network", Message: err.Error(), Err: err}, -1
		}
	}
	answer, err := c.transport.send(ctx, method, path, payload, credential, nonce)
	if err != nil {
		if !errors.As(err, &failure) {
			return &ClientError{Code: "network", Message: err.Error(), Err: err}, -1
		}
		return failure, retryAfterOf(answer.header)
	}
	if nonce != "" {
		verdict, err := VerifySignedAnswer(SignedAnswer{Body: answer.body, Signature: answer.header.Get("Licensing-Signature"), Nonce: nonce}, c.options.ResponseKeys, SignedAnswerOptions{Now: c.now()})
		if err != nil {
			return &ClientError{Code: string(CodeSignatureInvalid), Message: err.Error(), Status: answer.status, Err: err}, -1
		}
		if !verdict.Valid {
			first := verdict.Errors[0]
			return &ClientError{Code: string(first.Code), Message: first.Message, Status: answer.status, Err: first}, -1
		}
	}
	if out != nil && len(bytes.TrimSpace(answer.body)) > 0 {
		if failure := answer.decode(out); failure != nil {
			return failure, -1
		}
	}
	return nil, -1
}

// retryAfterOf reads a Retry-After header in seconds, the form the platform sends.
// It is negative when the header is absent or unreadable: the backoff decides.
func retryAfterOf(header http.Header) time.Duration {
	seconds, err := strconv.ParseFloat(strings.TrimSpace(header.Get("Retry-After")), 64)
	if err != nil || !(seconds >= 0) || math.IsInf(seconds, 0) {
		return -1
	}
	delay := time.Duration(seconds * float64(time.Second))
	if delay > maxRetryAfter {
		delay = maxRetryAfter
	}
	return delay
}

func statusOfCode(code string) StatusCode {
	lowered := StatusCode(strings.ToLower(code))
	switch lowered {
	case "valid", StatusOK:
		return StatusOK
	case StatusOverage, StatusRevoked, StatusSuspended, StatusExpired, StatusNotFound, StatusFingerprintMismatch,
		StatusNoActivation, StatusHeartbeatDead, StatusComponentsMismatch, StatusOverdue, StatusEntitlementsMissing:
		return lowered
	}
	return StatusUnknown
}

// newNonce is 16 random bytes, base64url: what a signed answer must be signed for.
func newNonce() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// TimeOrderedUUID is a version-7 UUID (RFC 9562): 48 bits of Unix milliseconds, then random bits.
// Report ids that grow with time keep the service's index of them compact.
// The randomness keeps them unguessable.
func TimeOrderedUUID(now time.Time) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(now.UnixMilli()))
	copy(b[:6], ms[2:])
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}
