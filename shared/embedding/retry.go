package embedding

import (
	"errors"
	"log/slog"
	"time"

	"github.com/agentmem/agentmem/shared/upstream"
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
type StatusError = upstream.StatusError

// RetryPolicy bounds how long one Embed call keeps trying (see upstream.Policy, whose defaults
// it takes: 6 attempts, backoff from 200ms to 5s with full jitter, 20s in all, a 10s cooldown).
type RetryPolicy = upstream.Policy

// newRetrier is the retrier of one embedding provider.
func newRetrier(provider string, policy RetryPolicy, timeout time.Duration, log *slog.Logger) *upstream.Retrier {
	return upstream.NewRetrier("embedding", provider, policy, timeout, ErrUnavailable, log)
}
