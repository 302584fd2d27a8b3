package app

import (
	"context"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// ForgetUserInput is the request of forget-user.
type ForgetUserInput struct {
	ActingFor
}

// ForgetUser erases everything stored for a user, in every table that holds user rows
// (sessions, messages, memories, key/value memory, state, notes, active sessions, idempotency
// records, and any table with a user_id column added later), in one transaction.
//
//   - A user erases themself, within their token's tenant, under row-level security. They may
//     repeat their own user_id and tenant_id; naming anyone else's is forbidden.
//   - A service caller names user_id (required, invalid without). With tenant_id it erases that
//     tenant's rows of the user ("" being the tenant-less scope); without tenant_id it erases the
//     user's rows in every tenant, as an erasure request about a person expects.
//
// With the Redis cache, the user's cached windows (every tenant's) are deleted once the erasure
// committed, before the answer; the erasure's job deletes them again (and retries) when Redis
// was unreachable.
//
// {user_id, tenant_id (null: every tenant), deleted: {<table>: n, ...}}, a count for every
// table (zeros included). Erasing again answers zeros. Writes that start after the erasure
// commits are not undone: stop the user's agents first (user-state) when that matters.
func (a *App) ForgetUser(ctx context.Context, pr auth.Principal, req ForgetUserInput) (memory.ForgetResult, error) {
	var f apierror.Fields
	sc, err := scope(pr, req.ActingFor, nil, "", &f)
	if err != nil {
		return memory.ForgetResult{}, err
	}
	if err := f.Err(); err != nil {
		return memory.ForgetResult{}, err
	}
	p := store.ForgetParams{UserID: sc.UserID, TenantID: sc.TenantID}
	if pr.IsService() {
		p.AllTenants = req.TenantID == nil
	} else {
		p.AsUser = true
	}
	return a.forget(ctx, p)
}

// EraseUser erases a user as a service caller would: in one tenant when tenant is not nil,
// else in every tenant. The operator command runs it.
func (a *App) EraseUser(ctx context.Context, userID string, tenant *string) (memory.ForgetResult, error) {
	if !auth.ValidUserID(userID) {
		return memory.ForgetResult{}, apierror.Invalid("user_id", userIDRule)
	}
	p := store.ForgetParams{UserID: auth.NormalUserID(userID), AllTenants: tenant == nil}
	if tenant != nil {
		var f apierror.Fields
		if !tenantField(&f, tenant) {
			return memory.ForgetResult{}, f.Err()
		}
		p.TenantID = *tenant
	}
	return a.forget(ctx, p)
}

func (a *App) forget(ctx context.Context, p store.ForgetParams) (memory.ForgetResult, error) {
	res, err := a.store.ForgetUser(ctx, p)
	if err != nil {
		return res, err
	}
	// The cached windows go now, not when the erasure's job is delivered (every tenant's: the
	// cache keeps a user's windows together).
	if a.cache != nil && a.cache.Ready() {
		if err := a.cache.DropUser(ctx, p.UserID); err != nil {
			a.log.WarnContext(ctx, "forget user: cached windows left to the erasure's job", "adapter", a.cache.Name(),
				"user_id", p.UserID, "error", err)
		}
	}
	a.notify(ctx)
	var total int64
	for _, n := range res.Deleted {
		total += n
	}
	a.log.InfoContext(ctx, "forget user", "user_id", p.UserID, "all_tenants", p.AllTenants,
		"as_user", p.AsUser, "rows", total)
	return res, nil
}
