package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// Policy bounds how long one call to a provider keeps trying. Zero fields take their defaults.
type Policy struct {
	// MaxAttempts is the most requests one call makes; default 6.
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
	// Cooldown is how long, after a call gave up, later calls fail at once with the
	// provider's "unavailable" error instead of waiting out their own retries against a
	// provider known to be down; default 10s, or the provider's Retry-After when longer.
	// Negative disables it.
	Cooldown time.Duration
}

// WithDefaults is p with its zero fields set to their defaults.
func (p Policy) WithDefaults() Policy {
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

// Retrier runs a provider's requests under a Policy, with a per-attempt timeout, and remembers
// for the cooldown that the provider is down. It is safe for concurrent use.
type Retrier struct {
	service     string
	provider    string
	policy      Policy
	timeout     time.Duration
	unavailable error
	log         *slog.Logger
	// downUntil is the Unix nanosecond time before which calls fail at once; 0 when up.
	downUntil atomic.Int64
}

// NewRetrier returns a Retrier for provider's service ("embedding", "chat": the word its log
// lines begin with). A call that gives up wraps unavailable (the caller's sentinel, tested
// with errors.Is). log receives a warning when a call gives up or fails for good (the error's
// text, which never holds content), and a debug line per retry; nil logs nothing.
func NewRetrier(service, provider string, policy Policy, timeout time.Duration, unavailable error, log *slog.Logger) *Retrier {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Retrier{service: service, provider: provider, policy: policy.WithDefaults(), timeout: timeout,
		unavailable: unavailable, log: log}
}

// Budget returns the context a call runs under: the caller's, shortened to MaxElapsed.
func (r *Retrier) Budget(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.policy.MaxElapsed)
}

// Do runs attempt until it succeeds, fails for good, or the budget is spent. ctx should come
// from Budget. attempt gets a context bounded by the per-attempt timeout and classifies its
// failures with Temporary; any other error is returned as it is.
func (r *Retrier) Do(ctx context.Context, attempt func(ctx context.Context) error) error {
	now := time.Now()
	if until := r.downUntil.Load(); until != 0 && now.UnixNano() < until {
		return fmt.Errorf("%w: %s failed moments ago; not trying again for another %s", r.unavailable,
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
			return fmt.Errorf("%w: %s did not answer within %s (%d attempts): %w", r.unavailable,
				r.provider, time.Since(start).Round(time.Millisecond), n, ctx.Err())
		}
		var te *temporaryError
		switch {
		case errors.As(err, &te):
		case attemptTimedOut && errors.Is(err, context.DeadlineExceeded):
			te = &temporaryError{err: fmt.Errorf("no answer within %s", r.timeout)}
		default:
			// Refused or unusable: retrying cannot help, and callers carry on without the
			// answer, so this log is where a wrong key or model shows.
			r.log.WarnContext(ctx, r.service+" request failed", "provider", r.provider, "error", err.Error())
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
		r.log.DebugContext(ctx, r.service+" request failed; retrying", "provider", r.provider,
			"attempt", n, "wait_ms", wait.Milliseconds(), "error", te.err.Error())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			if errors.Is(ctx.Err(), context.Canceled) {
				return ctx.Err()
			}
			return fmt.Errorf("%w: %s: %w", r.unavailable, r.provider, last)
		case <-t.C:
		}
	}
	elapsed := time.Since(start)
	if r.policy.Cooldown > 0 {
		r.downUntil.Store(time.Now().Add(max(r.policy.Cooldown, lastRetryAfter)).UnixNano())
	}
	r.log.WarnContext(ctx, r.service+" provider unavailable", "provider", r.provider, "attempts", n,
		"elapsed_ms", elapsed.Milliseconds(), "error", last.Error())
	return fmt.Errorf("%w: %s failed %d times in %s, last: %w", r.unavailable, r.provider, n,
		elapsed.Round(time.Millisecond), last)
}
