package licensing

// What Client and RelayClient share: one request within a timeout, its failures as a
// *ClientError, and the background heartbeat.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// transport sends JSON requests to one service.
type transport struct {
	http    *http.Client
	baseURL string
	// timeout is per request.
	timeout time.Duration
	// name names the service in messages.
	name string
	// limit caps how much of an answer is read. Zero means no cap.
	limit int64
	// contextErrors makes a caller's ended context the error (canceled or timeout).
	// A cut answer is then named like a failed send.
	// Without it, both are network errors.
	contextErrors bool
}

// reply is an answer: its status, header and body.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// send sends one request and reads its answer.
// A 2xx is no error. Another status is the service's problem, as a *ClientError.
// No answer is a *ClientError too: network or timeout (or canceled).
// A request that cannot be made is a plain error.
func (t *transport) send(ctx context.Context, method, path string, payload []byte, credential, nonce string) (reply, error) {
	attemptCtx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	request, err := http.NewRequestWithContext(attemptCtx, method, t.baseURL+path, body)
	if err != nil {
		return reply{}, err
	}
	request.Header.Set("Accept", "application/json")
	if payload != nil {
		request.Header.Set("Content-Type", "application/json")
	}
	if credential != "" {
		request.Header.Set("Authorization", "Bearer "+credential)
	}
	if nonce != "" {
		request.Header.Set("Licensing-Nonce", nonce)
	}
	response, err := t.http.Do(request)
	if err != nil {
		return reply{}, t.noAnswer(ctx, attemptCtx, false, err)
	}
	defer response.Body.Close()
	var reader io.Reader = response.Body
	if t.limit > 0 {
		reader = io.LimitReader(reader, t.limit)
	}
	text, err := io.ReadAll(reader)
	if err != nil {
		return reply{}, t.noAnswer(ctx, attemptCtx, true, err)
	}
	answer := reply{status: response.StatusCode, header: response.Header, body: text}
	if answer.status < 200 || answer.status > 299 {
		return answer, answer.problem()
	}
	return answer, nil
}

// noAnswer is the error of a request that got no answer.
// cut says the answer started but could not be read.
func (t *transport) noAnswer(ctx, attemptCtx context.Context, cut bool, err error) *ClientError {
	if t.contextErrors && ctx.Err() != nil {
		return contextFailure(ctx, err)
	}
	if cut && !t.contextErrors {
		return &ClientError{Code: "network", Message: "the answer was cut: " + err.Error(), Err: err}
	}
	if ctx.Err() == nil && attemptCtx.Err() != nil {
		return &ClientError{Code: "timeout", Message: fmt.Sprintf("no answer within %v", t.timeout), Err: err}
	}
	return &ClientError{Code: "network", Message: t.name + " is unreachable: " + err.Error(), Err: err}
}

// contextFailure is the error of a call whose context ended: a timeout, or a cancel.
func contextFailure(ctx context.Context, err error) *ClientError {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &ClientError{Code: "timeout", Message: "the context's deadline passed", Err: ctx.Err()}
	}
	return &ClientError{Code: "canceled", Message: "the context was canceled", Err: ctx.Err()}
}

// problem is the error of a refusal: its problem+json code and detail.
func (r reply) problem() *ClientError {
	var problem struct {
		Code   string `json:"code"`
		Detail string `json:"detail"`
		Title  string `json:"title"`
	}
	_ = json.Unmarshal(r.body, &problem)
	failure := &ClientError{Code: problem.Code, Message: problem.Detail, Status: r.status}
	if failure.Code == "" {
		failure.Code = "http_" + strconv.Itoa(r.status)
	}
	if failure.Message == "" {
		failure.Message = problem.Title
	}
	if failure.Message == "" {
		failure.Message = "HTTP " + strconv.Itoa(r.status)
	}
	return failure
}

// decode reads the answer's JSON into out.
func (r reply) decode(out any) *ClientError {
	if err := json.Unmarshal(r.body, out); err != nil {
		return &ClientError{Code: "invalid_answer", Message: "the answer is not the JSON expected: " + err.Error(), Status: r.status, Err: err}
	}
	return nil
}

// joinCodes lists a verdict's error codes, for a message.
func joinCodes(errs []VerifyError) string {
	codes := make([]string, len(errs))
	for i, e := range errs {
		codes[i] = string(e.Code)
	}
	return strings.Join(codes, ", ")
}

// heartbeat runs a seat's beats in a goroutine.
type heartbeat struct {
	// run makes one start or stop run at a time.
	run    sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}

	mu  sync.Mutex
	err error
}

// start replaces the running goroutine.
// The new one calls beat after each delay, until ctx ends or stop.
// It keeps the last beat's error, and passes a failure to onError when it is not nil.
func (h *heartbeat) start(ctx context.Context, delay func() time.Duration, beat func(context.Context) error, onError func(error)) {
	h.run.Lock()
	defer h.run.Unlock()
	h.stopLocked()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	h.cancel, h.done = cancel, done
	go func() {
		defer close(done)
		for {
			timer := time.NewTimer(delay())
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
			err := beat(ctx)
			if ctx.Err() != nil {
				return
			}
			h.mu.Lock()
			h.err = err
			h.mu.Unlock()
			if err != nil && onError != nil {
				onError(err)
			}
		}
	}()
}

// stop ends the goroutine and waits for it.
func (h *heartbeat) stop() {
	h.run.Lock()
	defer h.run.Unlock()
	h.stopLocked()
}

func (h *heartbeat) stopLocked() {
	if h.cancel != nil {
		h.cancel()
		<-h.done
		h.cancel, h.done = nil, nil
	}
}

// lastError is the last beat's error, nil after a beat that worked.
func (h *heartbeat) lastError() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// heartbeatDelay is half the time left until expiresAt (RFC 3339).
// It is at most interval and at least floor.
// No expiry, or one that does not parse, means interval.
func heartbeatDelay(expiresAt string, now time.Time, interval, floor time.Duration) time.Duration {
	at, err := time.Parse(time.RFC3339Nano, expiresAt)
	if err != nil {
		return interval
	}
	delay := at.Sub(now) / 2
	if delay > interval {
		delay = interval
	}
	if delay < floor {
		delay = floor
	}
	return delay
}
