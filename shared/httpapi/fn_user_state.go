package httpapi

import (
	"context"
	"net/http"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/store"
)

// userStateModeMaxChars is the longest mode.
const userStateModeMaxChars = 64

// The operations of user-state.
const (
	userStateOpSet    = "set"
	userStateOpGet    = "get"
	userStateOpDelete = "delete"
)

type userStateRequest struct {
	actingFor
	Op   string  `json:"op"`
	Mode *string `json:"mode"`
	// Agent is refused with a reason: the state is the user's, shared by every agent.
	Agent *string `json:"agent"`
}

type userStateSet struct {
	store.UserState
	Created bool `json:"created"`
}

type userStateDeleted struct {
	Deleted bool `json:"deleted"`
}

// userState is the user's one mode string (e.g. active, halted), shared by all of the user's
// agents. A mode is 1 to 64 characters without control characters or surrounding whitespace,
// stored as given and compared case-sensitively; its meaning is the application's.
//
//   - set {mode}: 201 {mode, updated_at, created: true} when the user had no mode, 200 with
//     created false when it replaces one (also when the mode is the same).
//   - get: 200 {mode, updated_at}; 404 when the user has no mode.
//   - delete: 200 {deleted: true}; 404 when the user has no mode.
func (s *Server) userState(ctx context.Context, c *call) (int, any, error) {
	op, err := opOf(c.body, userStateOpSet, userStateOpGet, userStateOpDelete)
	if err != nil {
		return 0, nil, err
	}
	var req userStateRequest
	if err := decode(c.body, &req); err != nil {
		return 0, nil, err
	}
	var f apierror.Fields
	if req.Agent != nil {
		f.Add("agent", "is not a field of user-state: the state belongs to the user and every agent sees it")
	}
	sc, err := c.scope(req.actingFor, nil, "", &f)
	if err != nil {
		return 0, nil, err
	}
	var mode string
	if op == userStateOpSet {
		mode = labelField(&f, "mode", req.Mode, userStateModeMaxChars)
	} else {
		unusedForOp(&f, op, "mode", req.Mode != nil)
	}
	if err := f.Err(); err != nil {
		return 0, nil, err
	}

	switch op {
	case userStateOpSet:
		st, created, err := s.store.SetUserState(ctx, sc, mode)
		if err != nil {
			return 0, nil, err
		}
		if created {
			return http.StatusCreated, userStateSet{UserState: st, Created: true}, nil
		}
		return http.StatusOK, userStateSet{UserState: st}, nil
	case userStateOpGet:
		st, err := s.store.GetUserState(ctx, sc)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, st, nil
	default:
		if err := s.store.DeleteUserState(ctx, sc); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, userStateDeleted{Deleted: true}, nil
	}
}
