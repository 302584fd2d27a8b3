package app

import (
	"context"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/telemetry"
)

// The intents the intents function takes.
var intentTypes = []string{adapter.SyncSession, adapter.BackfillSession}

// IntentInput is the request of the intents function.
type IntentInput struct {
	ActingFor
	Type      *string `json:"type"`
	SessionID *string `json:"session_id"`
}

// IntentOutput is its answer (202).
type IntentOutput struct {
	IntentID  uuid.UUID       `json:"intent_id"`
	Type      string          `json:"type"`
	SessionID uuid.UUID       `json:"session_id"`
	Jobs      []memory.JobRef `json:"jobs"`
	// Coalesced reports a backfill that wrote no job: the session's backfill was still pending
	// for every adapter from an earlier request, whose jobs and intent id answer for it.
	Coalesced bool `json:"coalesced"`
}

// CreateIntent asks every enabled adapter to act on a session: syncSession (the session's
// state) or backfillSession (every message it holds, in pages). A user names their own
// session; a service caller names user_id too. Another user's session is not found. A backfill
// takes a slot of its user's backfill limit (RateLimit.Backfill), and one that finds the
// session's backfill still pending for an adapter answers with that job rather than write
// another (see store.CreateIntent).
func (a *App) CreateIntent(ctx context.Context, pr auth.Principal, in IntentInput) (IntentOutput, error) {
	var f apierror.Fields
	sc, err := scope(pr, in.ActingFor, nil, "", &f)
	if err != nil {
		return IntentOutput{}, err
	}
	typ := ""
	if in.Type == nil {
		f.Add("type", "is required")
	} else {
		typ = oneOf(&f, "type", in.Type, "", intentTypes...)
	}
	var session uuid.UUID
	if id := parseUUID(&f, "session_id", in.SessionID, true); id != nil {
		session = *id
	}
	if err := f.Err(); err != nil {
		return IntentOutput{}, err
	}
	if typ == adapter.BackfillSession {
		if err := a.limitBackfill(ctx, sc); err != nil {
			return IntentOutput{}, err
		}
	}
	ictx, sp := telemetry.StartIntent(ctx, typ)
	sctx, ssp := telemetry.StartAdapter(ictx, telemetry.AdapterSupabase)
	res, err := a.store.CreateIntent(sctx, store.IntentParams{Scope: sc, SessionID: session, Intent: typ})
	ssp.End(err)
	sp.End(err)
	if err != nil {
		return IntentOutput{}, err
	}
	a.log.InfoContext(ctx, "intent", "type", typ, "intent_id", res.IntentID.String(), "jobs", len(res.Jobs),
		"coalesced", res.Coalesced)
	if !res.Coalesced {
		a.notify(ctx)
	}
	return IntentOutput{IntentID: res.IntentID, Type: typ, SessionID: session, Jobs: res.Jobs, Coalesced: res.Coalesced}, nil
}
