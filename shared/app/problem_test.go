package app_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/store"
)

// Each kind of the store's errors reaches the caller under its problem code, with the store's
// detail and field; a store error without a detail, or an error of no kind, is internal; a
// problem a use case made is kept; and the cause stays in the chain for the transport.
func TestProblemMapsStoreKinds(t *testing.T) {
	t.Parallel()
	lost := &store.Error{Kind: store.ErrUnavailable, Detail: "the database is unavailable; retry",
		Err: fmt.Errorf("%w: %w", store.ErrConnectionLost, errors.New("read: connection reset by peer"))}
	made := apierror.New(apierror.Forbidden, "tenant_id may name only the caller's tenant")
	for _, tc := range []struct {
		name   string
		err    error
		code   apierror.Code
		detail string
		fields []apierror.FieldError
	}{
		{"not found", fmt.Errorf("retry job: %w", &store.Error{Kind: store.ErrNotFound, Detail: "job not found"}),
			apierror.NotFound, "job not found", nil},
		{"conflict", &store.Error{Kind: store.ErrConflict, Detail: "the memory changed since it was read", Err: store.ErrMemoryChanged},
			apierror.Conflict, "the memory changed since it was read", nil},
		{"forbidden", &store.Error{Kind: store.ErrForbidden, Detail: "only a service caller changes it", Err: store.ErrSharedMemoryWrite},
			apierror.Forbidden, "only a service caller changes it", nil},
		{"invalid text", &store.Error{Kind: store.ErrInvalid, Detail: "the request holds text the database cannot store"},
			apierror.InvalidRequest, "the request holds text the database cannot store", nil},
		{"invalid field", &store.Error{Kind: store.ErrInvalid, Field: "value", FieldIssue: "holds JSON the database cannot store",
			Detail: "value holds JSON the database cannot store (e.g. an unpaired surrogate escape)"},
			apierror.InvalidRequest, "value holds JSON the database cannot store (e.g. an unpaired surrogate escape)",
			[]apierror.FieldError{{Field: "value", Message: "holds JSON the database cannot store"}}},
		{"unavailable", lost, apierror.Unavailable, "the database is unavailable; retry", nil},
		{"not found the store did not expect", &store.Error{Kind: store.ErrNotFound}, apierror.Internal, "an internal error occurred", nil},
		{"conflict the store did not expect", &store.Error{Kind: store.ErrConflict}, apierror.Internal, "an internal error occurred", nil},
		{"no kind", errors.New("database: column does not exist"), apierror.Internal, "an internal error occurred", nil},
		{"a use case's problem", fmt.Errorf("scope: %w", made), apierror.Forbidden, made.Detail, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := app.Problem(tc.err)
			if p.Code != tc.code || p.Detail != tc.detail || !slices.Equal(p.Fields, tc.fields) {
				t.Fatalf("Problem = %s %q %v, want %s %q %v", p.Code, p.Detail, p.Fields, tc.code, tc.detail, tc.fields)
			}
			if !errors.Is(p, tc.err) && p != made {
				t.Errorf("Problem(%v) lost its cause", tc.err)
			}
		})
	}
	if p := app.Problem(lost); !errors.Is(p, app.ErrDatabaseLost) {
		t.Errorf("a lost connection's problem does not say so: %v", p)
	}
	if p := app.Problem(&store.Error{Kind: store.ErrConflict, Detail: "changed", Err: store.ErrMemoryChanged}); !errors.Is(p, store.ErrMemoryChanged) {
		t.Errorf("a changed memory's problem does not say so: %v", p)
	}
}
