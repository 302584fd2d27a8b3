package app

import (
	"context"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
)

// userStateModeMaxChars is the longest mode.
const userStateModeMaxChars = 64

// The operations of user-state.
const (
	UserStateOpSet    = "set"
	UserStateOpGet    = "get"
	UserStateOpDelete = "delete"
)

// UserStateInput is the request of every operation of user-state.
type UserStateInput struct {
	ActingFor
	Op   string  `json:"op"`
	Mode *string `json:"mode"`
	// Agent is refused with a reason: the state is the user's, shared by every agent.
	Agent *string `json:"agent"`
}

// UserStateSet is the answer of set.
type UserStateSet struct {
	memory.UserState
	Created bool `json:"created"`
}

// UserStateDeleted is the answer of delete.
type UserStateDeleted struct {
	Deleted bool `json:"deleted"`
}

// The user-state operations keep the user's one mode string (e.g. active, halted), shared by
// all of the user's agents. A mode is 1 to 64 characters without control characters or
// surrounding whitespace, stored as given and compared case-sensitively; its meaning is the
// application's.
//
//   - set {mode}: {mode, updated_at, created: true} when the user had no mode, created false
//     when it replaces one (also when the mode is the same).
//   - get: {mode, updated_at}; not found when the user has no mode.
//   - delete: {deleted: true}; not found when the user has no mode.
func userStateRequest(p auth.Principal, in UserStateInput, op string) (memory.Scope, string, error) {
	var f apierror.Fields
	if in.Agent != nil {
		f.Add("agent", "is not a field of user-state: the state belongs to the user and every agent sees it")
	}
	sc, err := scope(p, in.ActingFor, nil, "", &f)
	if err != nil {
		return sc, "", err
	}
	var mode string
	if op == UserStateOpSet {
		mode = labelField(&f, "mode", in.Mode, userStateModeMaxChars)
	} else {
		unusedForOp(&f, op, "mode", in.Mode != nil)
	}
	return sc, mode, f.Err()
}

// SetUserState sets the user's mode.
func (a *App) SetUserState(ctx context.Context, p auth.Principal, in UserStateInput) (UserStateSet, error) {
	sc, mode, err := userStateRequest(p, in, UserStateOpSet)
	if err != nil {
		return UserStateSet{}, err
	}
	st, created, err := a.store.SetUserState(ctx, sc, mode)
	return UserStateSet{UserState: st, Created: created}, err
}

// GetUserState reads the user's mode.
func (a *App) GetUserState(ctx context.Context, p auth.Principal, in UserStateInput) (memory.UserState, error) {
	sc, _, err := userStateRequest(p, in, UserStateOpGet)
	if err != nil {
		return memory.UserState{}, err
	}
	return a.store.GetUserState(ctx, sc)
}

// DeleteUserState removes the user's mode.
func (a *App) DeleteUserState(ctx context.Context, p auth.Principal, in UserStateInput) (UserStateDeleted, error) {
	sc, _, err := userStateRequest(p, in, UserStateOpDelete)
	if err != nil {
		return UserStateDeleted{}, err
	}
	if err := a.store.DeleteUserState(ctx, sc); err != nil {
		return UserStateDeleted{}, err
	}
	return UserStateDeleted{Deleted: true}, nil
}
