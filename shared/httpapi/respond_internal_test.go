package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/store"
)

// Every code of the vocabulary has its status, and a code the caller caused is a 4xx while the
// server's own are 5xx: the log and the CLI decide by CallerFault, clients by the status.
func TestStatusAgreesWithCallerFault(t *testing.T) {
	t.Parallel()
	for code, status := range statuses {
		t.Run(string(code), func(t *testing.T) {
			if got := Status(code); got != status {
				t.Fatalf("Status = %d, want %d", got, status)
			}
			if client := status < 500; client != code.CallerFault() {
				t.Errorf("status %d but CallerFault %v", status, code.CallerFault())
			}
		})
	}
	if got := Status("no_such_code"); got != http.StatusInternalServerError {
		t.Errorf("an unknown code answers %d, want 500", got)
	}
	if apierror.Code("no_such_code").CallerFault() {
		t.Error("an unknown code is put on the caller")
	}
}

// The Retry-After policy: the wait an error names wins; else a broken connection waits longer
// than a busy moment, and a failed embedding provider longer still.
func TestRetryAfterPolicy(t *testing.T) {
	t.Parallel()
	cause := fmt.Errorf("dial: %w", context.DeadlineExceeded)
	for _, tc := range []struct {
		name string
		err  *apierror.Error
		want int
	}{
		{"names its wait", &apierror.Error{Code: apierror.RateLimited, RetryAfter: 7}, 7},
		{"names its wait over the cause's", &apierror.Error{Code: apierror.Unavailable, RetryAfter: 3,
			Cause: fmt.Errorf("%w: %w", store.ErrConnectionLost, cause)}, 3},
		{"busy", &apierror.Error{Code: apierror.Unavailable, Cause: cause}, retryAfterBusy},
		{"no cause", &apierror.Error{Code: apierror.Unavailable}, retryAfterBusy},
		{"connection lost", &apierror.Error{Code: apierror.Unavailable,
			Cause: fmt.Errorf("%w: %w", store.ErrConnectionLost, cause)}, retryAfterDatabaseDown},
		{"embedding provider down", &apierror.Error{Code: apierror.Unavailable,
			Cause: fmt.Errorf("embed: %w", embedding.ErrUnavailable)}, retryAfterEmbeddingDown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := retryAfter(tc.err); got != tc.want {
				t.Errorf("retryAfter = %d, want %d", got, tc.want)
			}
		})
	}
}
