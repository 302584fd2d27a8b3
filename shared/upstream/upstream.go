// Package upstream holds what every client of a third-party model provider (embeddings, chat)
// shares: one retry policy with backoff, Retry-After and a cooldown once the provider is known
// to be down, and the sorting of a provider's failures into "not now" (retried) and "never"
// (StatusError). Nothing here logs or keeps a request's content, a provider's error message
// (which may quote the input or the key) or a URL (whose query may carry a secret).
package upstream

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

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

// temporaryError is a failed attempt worth repeating: 408, 425, 429, 5xx, a network error or an
// attempt that ran out of its own time.
type temporaryError struct {
	err error
	// retryAfter is the provider's Retry-After, 0 when it sent none.
	retryAfter time.Duration
}

func (e *temporaryError) Error() string { return e.err.Error() }
func (e *temporaryError) Unwrap() error { return e.err }

// Temporary marks err as worth retrying, after at least retryAfter (0: the policy's backoff).
func Temporary(err error, retryAfter time.Duration) error {
	return &temporaryError{err: err, retryAfter: retryAfter}
}

// RetryableStatus reports the HTTP statuses that say "not now" rather than "never".
func RetryableStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooEarly ||
		status == http.StatusTooManyRequests || status >= 500
}

// MaxRetryAfter caps the wait a provider may ask for: a Retry-After of years (or a number
// beyond time.Duration's range) must not keep the provider marked down for that long.
const MaxRetryAfter = 10 * time.Minute

// RetryAfter reads how long the provider asks to wait: Azure's retry-after-ms, then the
// standard Retry-After in seconds or as an HTTP date. 0 when absent, unreadable or not a
// positive finite number; at most MaxRetryAfter.
func RetryAfter(h http.Header, now time.Time) time.Duration {
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
		return min(t.Sub(now), MaxRetryAfter)
	}
	return 0
}

// capRetryAfter converts seconds to a duration within 0 and MaxRetryAfter, comparing before
// converting (a float beyond int64's range converts to anything); NaN is 0.
func capRetryAfter(seconds float64) time.Duration {
	switch {
	case !(seconds > 0): // NaN too
		return 0
	case seconds >= MaxRetryAfter.Seconds():
		return MaxRetryAfter
	}
	return time.Duration(seconds * float64(time.Second))
}

// SendError is a transport failure without its URL, which could carry a secret in its query.
func SendError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("send request: %w", ue.Err)
	}
	return fmt.Errorf("send request: %w", err)
}

// AzureOpenAIHost reports whether host serves Azure OpenAI (*.openai.azure.com,
// *.cognitiveservices.azure.com, *.services.ai.azure.com), which takes its key in an api-key
// header rather than as a bearer token.
func AzureOpenAIHost(host string) bool {
	host = strings.ToLower(host)
	return strings.HasSuffix(host, ".openai.azure.com") || strings.HasSuffix(host, ".cognitiveservices.azure.com") ||
		strings.HasSuffix(host, ".services.ai.azure.com")
}
