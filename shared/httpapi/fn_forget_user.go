package httpapi

import (
	"context"
	"net/http"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/store"
)

type forgetUserRequest struct {
	actingFor
}

// forgetUser erases everything stored for a user, in every table that holds user rows
// (sessions, messages, memories, key/value memory, state, notes, active sessions, idempotency
// records, and any table with a user_id column added later), in one transaction.
//
//   - A user erases themself, within their token's tenant, under row-level security. They may
//     repeat their own user_id and tenant_id; naming anyone else's is 403.
//   - A service caller names user_id (required, 400 without). With tenant_id it erases that
//     tenant's rows of the user ("" being the tenant-less scope); without tenant_id it erases the
//     user's rows in every tenant, as an erasure request about a person expects.
//
// 200 {user_id, tenant_id (null: every tenant), deleted: {<table>: n, ...}}, a count for every
// table (zeros included). Erasing again answers zeros. Writes that start after the erasure
// commits are not undone: stop the user's agents first (user-state) when that matters.
func (s *Server) forgetUser(ctx context.Context, c *call) (int, any, error) {
	var req forgetUserRequest
	if err := decode(c.body, &req); err != nil {
		return 0, nil, err
	}
	var f apierror.Fields
	sc, err := c.scope(req.actingFor, nil, "", &f)
	if err != nil {
		return 0, nil, err
	}
	if err := f.Err(); err != nil {
		return 0, nil, err
	}
	p := store.ForgetParams{UserID: sc.UserID, TenantID: sc.TenantID}
	if c.principal.IsService() {
		p.AllTenants = req.TenantID == nil
	} else {
		p.AsUser = true
	}
	res, err := s.forget(ctx, c.requestID, p)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, res, nil
}

// EraseUser erases a user as a service caller would: in one tenant when tenant is not nil,
// else in every tenant. The operator command runs it.
func (s *Server) EraseUser(ctx context.Context, userID uuid.UUID, tenant *string) (store.ForgetResult, error) {
	if userID == uuid.Nil {
		return store.ForgetResult{}, apierror.Invalid("user_id", "must be a UUID")
	}
	p := store.ForgetParams{UserID: userID, AllTenants: tenant == nil}
	if tenant != nil {
		var f apierror.Fields
		if !tenantField(&f, tenant) {
			return store.ForgetResult{}, f.Err()
		}
		p.TenantID = *tenant
	}
	return s.forget(ctx, "", p)
}

func (s *Server) forget(ctx context.Context, requestID string, p store.ForgetParams) (store.ForgetResult, error) {
	res, err := s.store.ForgetUser(ctx, p)
	if err != nil {
		return res, err
	}
	var total int64
	for _, n := range res.Deleted {
		total += n
	}
	attrs := []any{"user_id", p.UserID.String(), "all_tenants", p.AllTenants, "as_user", p.AsUser, "rows", total}
	if requestID != "" {
		attrs = append(attrs, "request_id", requestID)
	}
	s.log.InfoContext(ctx, "forget user", attrs...)
	return res, nil
}
