package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/apierror"
)

// A tenant is checked by one rule wherever it comes from: a tenant a token may not carry
// (401), a request body may not name either (400), in every function that takes tenant_id.
func TestTenantOneRule(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	svc := e.serviceToken()
	for _, tenant := range []string{"t\u0085", "t\u009f", "t\x7f", "t\x01", "tab\there", strings.Repeat("é", 129)} {
		u := e.newUser(tenant)
		if r := e.call(u.token, "recall", map[string]any{"query": "x"}); r.status != http.StatusUnauthorized {
			t.Errorf("token tenant %q: status %d, want 401: %s", tenant, r.status, r.raw)
		}
		uid := uuid.NewString()
		for _, c := range []struct {
			fn   string
			body map[string]any
		}{
			{"recall", map[string]any{"query": "x", "user_id": uid, "tenant_id": tenant}},
			{"knowledge", map[string]any{"op": "search", "query": "x", "tenant_id": tenant}},
			{"forget-user", map[string]any{"user_id": uid, "tenant_id": tenant}},
		} {
			t.Run(c.fn, func(t *testing.T) {
				r := e.call(svc, c.fn, c.body)
				if r.status != http.StatusBadRequest || !namesField(r, "tenant_id") {
					t.Errorf("%s with body tenant %q: %d %s, want 400 naming tenant_id", c.fn, tenant, r.status, r.raw)
				}
			})
		}
		_, err := e.app.EraseUser(context.Background(), uuid.NewString(), &tenant)
		if ae := apierror.As(err); ae.Code != apierror.InvalidRequest {
			t.Errorf("ForgetUser in tenant %q: %v, want invalid_request", tenant, err)
		}
	}
	// What a token may carry, a body may name.
	for _, tenant := range []string{"t\u00a0", "tëst", strings.Repeat("é", 128)} {
		u := e.newUser(tenant)
		e.call(u.token, "recall", map[string]any{"query": "x", "tenant_id": tenant}).must(t, http.StatusOK)
		e.call(svc, "recall", map[string]any{"query": "x", "user_id": u.id.String(), "tenant_id": tenant}).must(t, http.StatusOK)
	}
}
