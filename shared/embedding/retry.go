package embedding

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// ErrUnavailable reports that an embedding provider could not be used right now: it kept
// answering 429 or 5xx, could not be reached, or did not answer in time, until the retry budget
// ran out (or an earlier call gave up moments ago, see RetryPolicy.Cooldown). Callers test it
// with errors.Is; agentmem then stores what it was given without a vector and embeds it later.
var ErrUnavailable = errors.New("embedding provider unavailable")

// ErrInvalidResponse reports an answer that cannot be used: not the JSON the provider's API
// describes, a vector count other than the text count, or vectors of the wrong length. It is
// not retried: the same request would get the same answer.
var ErrInvalidResponse = errors.New("embedding provider gave an invalid response")

// StatusError is a request the provider refused for good (a 4xx other than 408, 425 and 429):
// a wrong key, an unknown model, an input the model does not take. Retrying cannot help.
type StatusError struct {
	// Provider names the provider ("openai", "bedrock").
	Provider string
	// Status is the HTTP status.
	Status int
	// Code is the provider's error code or type (never its message, which may quote the key
	// or the input).
	Code string
}

func (e *StatusError) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("%s refused the request: status %d (%s)", e.Provider, e.Status, e.Code)
	}
	return fmt.Sprintf("%s refused the request: status %d", e.Provider, e.Status)
}

// RetryPolicy bounds how long one Embed call keeps trying. Zero fields take their defaults.
type RetryPolicy struct {
	// MaxAttempts is the most requests one batch makes; default 6.
	MaxAttempts int
	// InitialBackoff is the ceiling of the first wait; it doubles per attempt up to MaxBackoff.
	// Each wait is drawn uniformly below the ceiling ("full jitter"), so clients that failed
	// together do not retry together. Default 200ms.
	InitialBackoff time.Duration
	// MaxBackoff caps one wait (a longer Retry-After still wins); default 5s.
	MaxBackoff time.Duration
	// MaxElapsed bounds one call, attempts and waits together; default 20s. The caller's
	// context deadline bounds it too: a wait that would end after either is not started.
	MaxElapsed time.Duration
	// Cooldown is how long, after a call gave up, later calls fail at once with ErrUnavailable
	// instead of waiting out their own retries against a provider known to be down; default
	// 10s, or the provider's Retry-After when longer. Negative disables it.
	Cooldown time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 6
	}
	if p.InitialBackoff <= 0 {
		p.InitialBackoff = 200 * time.Millisecond
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = 5 * time.Second
	}
	if p.MaxElapsed <= 0 {
		p.MaxElapsed = 20 * time.Second
	}
	if p.Cooldown == 0 {
		p.Cooldown = 10 * time.Second
	}
	return p
}

// temporaryError is a failed attempt worth repeating: 408, 425, 429, 5xx, a network error or an
// attempt that ran out of its own time.
type temporaryError struct {
	err error
	// retryAfter is the provider's Retry-After, 0 when it sent none.
	retryAfter time.Duration
}

func (e *temporaryError) Error() string { return e.err.Error() }
func (e *temporaryError) Unwrap() error { return e.err }

// temporary marks err as worth retrying.
func temporary(err error, retryAfter time.Duration) error {
	return &temporaryError{err: err, retryAfter: retryAfter}
}

// retryableStatus reports the HTTP statuses that say "not now" rather than "never".
func retryableStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooEarly ||
		status == http.StatusTooManyRequests || status >= 500
}

// maxRetryAfter caps the wait a provider may ask for: a Retry-After of years (or a number
// beyond time.Duration's range) must not keep the provider marked down for that long.
const maxRetryAfter = 10 * time.Minute

// retryAfter reads how long the provider asks to wait: Azure's retry-after-ms, then the
// standard Retry-After in seconds or as an HTTP date. 0 when absent, unreadable or not a
// positive finite number; at most maxRetryAfter.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return capRetryAfter(ms / 1000)
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		return capRetryAfter(s)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), maxRetryAfter)
	}
	return 0
}

// capRetryAfter converts seconds to a duration within 0 and maxRetryAfter, comparing before
// converting (a float beyond int64's range converts to anything); NaN is 0.
func capRetryAfter(seconds float64) time.Duration {
	switch {
	case !(seconds > 0): // NaN too
		return 0
	case seconds >= maxRetryAfter.Seconds():
		return maxRetryAfter
	}
	return time.Duration(seconds * float64(time.Second))
}

// retrier runs a provider's requests under a RetryPolicy, with a per-attempt timeout, and
// remembers for the cooldown that the provider is down.
type retrier struct {
	provider string
	policy   RetryPolicy
	timeout  time.Duration
	log      *slog.Logger
	// downUntil is the Unix nanosecond time before which calls fail at once; 0 when up.
	downUntil atomic.Int64
}

func newRetrier(provider string, policy RetryPolicy, timeout time.Duration, log *slog.Logger) *retrier {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &retrier{provider: provider, policy: policy.withDefaults(), timeout: timeout, log: log}
}

// budget returns the context an Embed call runs under: the caller's, shortened to MaxElapsed.
func (r *retrier) budget(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.policy.MaxElapsed)
}

// do runs attempt until it succeeds, fails for good, or the budget is spent. ctx should come
// from budget. attempt gets a context bounded by the per-attempt timeout and classifies its
// failures with temporary; any other error is returned as it is.
func (r *retrier) do(ctx context.Context, attempt func(ctx context.Context) error) error {
	now := time.Now()
	if until := r.downUntil.Load(); until != 0 && now.UnixNano() < until {
		return fmt.Errorf("%w: %s failed moments ago; not trying again for another %s", ErrUnavailable,
			r.provider, time.Duration(until-now.UnixNano()).Round(time.Millisecond))
	}
	start := now
	deadline, hasDeadline := ctx.Deadline()
	var last error
	var lastRetryAfter time.Duration
	n := 0
	for n < r.policy.MaxAttempts {
		n++
		actx, cancel := context.WithTimeout(ctx, r.timeout)
		err := attempt(actx)
		attemptTimedOut := actx.Err() != nil
		cancel()
		if err == nil {
			r.downUntil.Store(0)
			return nil
		}
		if ctx.Err() != nil {
			if errors.Is(ctx.Err(), context.Canceled) {
				return ctx.Err()
			}
			// The budget ran out during an attempt: slow, but not known to be down.
			return fmt.Errorf("%w: %s did not answer within %s (%d attempts): %w", ErrUnavailable,
				r.provider, time.Since(start).Round(time.Millisecond), n, ctx.Err())
		}
		var te *temporaryError
		switch {
		case errors.As(err, &te):
		case attemptTimedOut && errors.Is(err, context.DeadlineExceeded):
			te = &temporaryError{err: fmt.Errorf("no answer within %s", r.timeout)}
		default:
			// Refused or unusable: retrying cannot help, and callers store without vectors,
			// so this log is where a wrong key or model shows.
			r.log.WarnContext(ctx, "embedding request failed", "provider", r.provider, "error", err.Error())
			return err
		}
		last, lastRetryAfter = te.err, te.retryAfter
		if n == r.policy.MaxAttempts {
			break
		}
		ceiling := r.policy.InitialBackoff << min(n-1, 20)
		if ceiling <= 0 || ceiling > r.policy.MaxBackoff {
			ceiling = r.policy.MaxBackoff
		}
		wait := time.Duration(rand.Int64N(int64(ceiling) + 1))
		wait = max(wait, te.retryAfter)
		if hasDeadline && time.Now().Add(wait).After(deadline) {
			break
		}
		r.log.DebugContext(ctx, "embedding request failed; retrying", "provider", r.provider,
			"attempt", n, "wait_ms", wait.Milliseconds(), "error", te.err.Error())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			if errors.Is(ctx.Err(), context.Canceled) {
				return ctx.Err()
			}
			return fmt.Errorf("%w: %s: %w", ErrUnavailable, r.provider, last)
		case <-t.C:
		}
	}
	elapsed := time.Since(start)
	if r.policy.Cooldown > 0 {
		r.downUntil.Store(time.Now().Add(max(r.policy.Cooldown, lastRetryAfter)).UnixNano())
	}
	r.log.WarnContext(ctx, "embedding provider unavailable", "provider", r.provider, "attempts", n,
		"elapsed_ms", elapsed.Milliseconds(), "error", last.Error())
	return fmt.Errorf("%w: %s failed %d times in %s, last: %w", ErrUnavailable, r.provider, n,
		elapsed.Round(time.Millisecond), last)
}
