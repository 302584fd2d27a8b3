package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
)

// The modes of ActiveSession.
const (
	ModeResolve  = "resolve"
	ModeActivate = "activate"
	ModeNew      = "new"
)

// ActiveSessionParams asks for the current session of a (tenant, user, agent).
type ActiveSessionParams struct {
	Scope memory.Scope
	// Mode is ModeResolve, ModeActivate or ModeNew.
	Mode string
	// SessionID is the client's remembered id (resolve) or the session to activate.
	SessionID *uuid.UUID
	// TTL is the retention of a session created here.
	TTL time.Duration
	// TTLIsDefault says TTL is the deployment's default retention (no ttl_seconds): the rows
	// written record it, and follow a later change of the default (see retention.go).
	TTLIsDefault bool
	// Metadata is the metadata of a session created here (a JSON object; nil for {}). A
	// session that exists keeps its own.
	Metadata json.RawMessage
}

// ActiveSession resolves, activates or starts the current session of a scope.
func (s *Store) ActiveSession(ctx context.Context, p ActiveSessionParams) (memory.ActiveSession, error) {
	ctx = withDefaultTTL(ctx, p.TTL, p.TTLIsDefault)
	var out memory.ActiveSession
	err := s.inScope(ctx, p.Scope, func(tx pgx.Tx) error {
		var err error
		switch p.Mode {
		case ModeActivate:
			out, err = activate(ctx, tx, p)
		case ModeNew:
			// Serialise with resolves of the scope so none of them sees no active session
			// half-way and creates a second one.
			if err = lockScope(ctx, tx, p.Scope); err != nil {
				return err
			}
			out, err = createActive(ctx, tx, p, uuid.New())
		default:
			out, err = resolve(ctx, tx, p)
		}
		return err
	})
	if err != nil {
		return memory.ActiveSession{}, err
	}
	out.Agent = p.Scope.Agent
	out.CreatedAt, out.LastActiveAt, out.LastSyncedAt = out.CreatedAt.UTC(), out.LastActiveAt.UTC(), utcOrNil(out.LastSyncedAt)
	if p.SessionID != nil && *p.SessionID == out.SessionID {
		out.Matched = true
	}
	return out, nil
}

// touchActiveSQL finds the active session of a scope ($1 user, $2 tenant, $3 agent) and
// refreshes its last activity: a resolve is activity, as a commit is. greatest keeps the time
// from going back when a commit that started later wrote first.
const touchActiveSQL = `
	update agentmem.sessions s set last_active_at = greatest(s.last_active_at, now())
	from agentmem.active_sessions a
	where a.user_id = $1 and a.tenant_id = $2 and a.agent = $3
	  and s.user_id = $1 and s.id = a.session_id and s.expires_at > now()
	returning ` + activeColumns

// activeColumns are the columns of a session scanActive reads, of a statement naming it s.
const activeColumns = `s.id, s.created_at, s.last_active_at, s.metadata, s.last_synced_at`

func scanActive(row pgx.Row, out *memory.ActiveSession) error {
	return row.Scan(&out.SessionID, &out.CreatedAt, &out.LastActiveAt, &out.Metadata, &out.LastSyncedAt)
}

func resolve(ctx context.Context, tx pgx.Tx, p ActiveSessionParams) (memory.ActiveSession, error) {
	sc := p.Scope
	var out memory.ActiveSession
	err := scanActive(tx.QueryRow(ctx, touchActiveSQL, sc.UserID, sc.TenantID, sc.Agent), &out)
	if err == nil {
		return out, nil
	}
	if !isNotFound(err) {
		return out, fmt.Errorf("select active session: %w", err)
	}
	// None yet: take the scope's lock and look again, so that concurrent resolves from several
	// devices create exactly one session.
	if err := lockScope(ctx, tx, sc); err != nil {
		return out, err
	}
	err = scanActive(tx.QueryRow(ctx, touchActiveSQL, sc.UserID, sc.TenantID, sc.Agent), &out)
	if err == nil {
		return out, nil
	}
	if !isNotFound(err) {
		return out, fmt.Errorf("select active session: %w", err)
	}
	return createActive(ctx, tx, p, uuid.New())
}

// utcOrNil is t in UTC, nil for nil.
func utcOrNil(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func lockScope(ctx context.Context, tx pgx.Tx, sc memory.Scope) error {
	_, err := tx.Exec(ctx, `select pg_advisory_xact_lock(hashtextextended($1::text, 7214))`,
		fmt.Sprintf("%d:%s/%s/%s", len(sc.TenantID), sc.TenantID, sc.UserID, sc.Agent))
	if err != nil {
		return fmt.Errorf("lock scope: %w", err)
	}
	return nil
}

func createActive(ctx context.Context, tx pgx.Tx, p ActiveSessionParams, id uuid.UUID) (memory.ActiveSession, error) {
	sc := p.Scope
	out := memory.ActiveSession{Created: true}
	err := scanActive(tx.QueryRow(ctx, `
		insert into agentmem.sessions as s (id, tenant_id, user_id, agent, expires_at, metadata)
		values ($1, $2, $3, $4, now() + make_interval(secs => $5::float8), coalesce($6::jsonb, '{}'::jsonb))
		returning `+activeColumns, id, sc.TenantID, sc.UserID, sc.Agent, p.TTL.Seconds(), rawOrNil(p.Metadata)), &out)
	if err != nil {
		return out, fmt.Errorf("insert session: %w", err)
	}
	return out, setActive(ctx, tx, sc, id)
}

func setActive(ctx context.Context, tx pgx.Tx, sc memory.Scope, id uuid.UUID) error {
	_, err := tx.Exec(ctx, `
		insert into agentmem.active_sessions (tenant_id, user_id, agent, session_id)
		values ($1, $2, $3, $4)
		on conflict (user_id, tenant_id, agent)
		do update set session_id = excluded.session_id, updated_at = now()`,
		sc.TenantID, sc.UserID, sc.Agent, id)
	if err != nil {
		return fmt.Errorf("set active session: %w", err)
	}
	return nil
}

// activate makes p.SessionID the active session: the caller's own (unexpired, same agent), or
// an id nobody uses yet, which starts a session. Anyone else's session looks like a missing one.
func activate(ctx context.Context, tx pgx.Tx, p ActiveSessionParams) (memory.ActiveSession, error) {
	sc, id := p.Scope, *p.SessionID
	if err := lockScope(ctx, tx, sc); err != nil {
		return memory.ActiveSession{}, err
	}
	// A new id starts a session; the caller's own session of this agent is kept (an expired one
	// comes back for the retention, as a commit to it would). Another agent's session returns
	// no row, and another user's fails row-level security: both look like a missing session.
	var out memory.ActiveSession
	err := tx.QueryRow(ctx, `
		insert into agentmem.sessions as s (id, tenant_id, user_id, agent, expires_at, metadata)
		values ($1, $2, $3, $4, now() + make_interval(secs => $5::float8), coalesce($6::jsonb, '{}'::jsonb))
		on conflict on constraint sessions_pkey do update
		  set expires_at = greatest(s.expires_at, excluded.expires_at),
		      last_active_at = greatest(s.last_active_at, now())
		  where s.agent = excluded.agent
		returning `+insertedSQL("s", "sessions", "p.user_id = $3 and p.id = $1")+`, `+activeColumns,
		id, sc.TenantID, sc.UserID, sc.Agent, p.TTL.Seconds(), rawOrNil(p.Metadata)).Scan(&out.Created,
		&out.SessionID, &out.CreatedAt, &out.LastActiveAt, &out.Metadata, &out.LastSyncedAt)
	if err = notFoundAs(err, sessionNotFound); err != nil {
		return out, fmt.Errorf("upsert session: %w", err)
	}
	return out, setActive(ctx, tx, sc, id)
}
