package app

import (
	"context"
	"encoding/json"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// ActiveSessionInput is the request of active-session.
type ActiveSessionInput struct {
	ActingFor
	Agent     *string `json:"agent"`
	SessionID *string `json:"session_id"`
	Mode      *string `json:"mode"`
	// Metadata is the metadata of a session this call creates (a JSON object); a session that
	// exists keeps its own (sessions set_metadata changes it).
	Metadata json.RawMessage `json:"metadata"`
}

// ActiveSession resolves, activates or starts the active session of (user, agent): see
// store.ActiveSessionParams.
func (a *App) ActiveSession(ctx context.Context, pr auth.Principal, req ActiveSessionInput) (memory.ActiveSession, error) {
	var f apierror.Fields
	sc, err := scope(pr, req.ActingFor, req.Agent, memory.DefaultAgent, &f)
	if err != nil {
		return memory.ActiveSession{}, err
	}
	mode := oneOf(&f, "mode", req.Mode, store.ModeResolve, store.ModeResolve, store.ModeActivate, store.ModeNew)
	id := parseUUID(&f, "session_id", req.SessionID, mode == store.ModeActivate)
	if mode == store.ModeNew && req.SessionID != nil {
		f.Add("session_id", "must not be given with mode new: a new session gets a new id")
	}
	md := objectField(&f, "metadata", req.Metadata, maxMetadataBytes)
	if err := f.Err(); err != nil {
		return memory.ActiveSession{}, err
	}
	return a.store.ActiveSession(ctx, store.ActiveSessionParams{Scope: sc, Mode: mode, SessionID: id, TTL: a.cfg.DefaultRetention,
		TTLIsDefault: true, Metadata: md})
}
