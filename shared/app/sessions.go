package app

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// Limits of the sessions function.
const (
	sessionsMaxLimit     = 100
	sessionsDefaultLimit = 20
	historyMaxLimit      = 200
	historyDefaultLimit  = 50
	sessionTitleMaxChars = 200
	// maxOffset bounds offset pagination: each page reads the messages (or sessions) it skips,
	// so a deep offset costs what skipping costs, where a cursor costs nothing.
	maxOffset = 10_000
)

// The operations of the sessions function.
const (
	SessionsOpList          = "list"
	SessionsOpHistory       = "history"
	SessionsOpReset         = "reset"
	SessionsOpDelete        = "delete"
	SessionsOpDeleteMessage = "delete_message"
	SessionsOpSetTitle      = "set_title"
	SessionsOpSetMetadata   = "set_metadata"
	SessionsOpClear         = "clear"
)

// The orders of sessions history.
const (
	historyNewest = "newest"
	historyOldest = "oldest"
)

// ListSessionsInput is the request of sessions list.
type ListSessionsInput struct {
	ActingFor
	Op     *string `json:"op"`
	Agent  *string `json:"agent"`
	Limit  *int64  `json:"limit"`
	Cursor *string `json:"cursor"`
	// Offset skips that many sessions (0 to maxOffset), instead of a cursor.
	Offset *int64 `json:"offset"`
}

// SessionList is a page of sessions.
type SessionList struct {
	Sessions   []memory.SessionSummary `json:"sessions"`
	NextCursor *string                 `json:"next_cursor"`
}

// ListSessions lists a user's sessions, newest activity first.
func (a *App) ListSessions(ctx context.Context, pr auth.Principal, req ListSessionsInput) (SessionList, error) {
	var f apierror.Fields
	sc, err := scope(pr, req.ActingFor, req.Agent, "", &f)
	if err != nil {
		return SessionList{}, err
	}
	p := store.ListSessionsParams{Scope: sc}
	p.Limit = int(intField(&f, "limit", req.Limit, sessionsDefaultLimit, 1, sessionsMaxLimit))
	p.After = sessionsCursor.after(&f, req.Cursor)
	p.Offset = offsetField(&f, req.Offset, req.Cursor)
	if err := f.Err(); err != nil {
		return SessionList{}, err
	}
	page, err := a.store.ListSessions(store.MayReadReplica(ctx), p)
	if err != nil {
		return SessionList{}, err
	}
	return SessionList{Sessions: page.Sessions, NextCursor: sessionsCursor.next(page.Next)}, nil
}

// SessionHistoryInput and the other inputs of the operations on one session are their
// requests. Agent, when given, must be the session's agent; without it the session may be of
// any agent of the user. (Flat structs: encoding/json would name a field of a nested embedded
// struct by its Go path in errors.) A history without session_id is the user's across every
// session (of agent, when given).
type SessionHistoryInput struct {
	ActingFor
	Op        *string `json:"op"`
	SessionID *string `json:"session_id"`
	Agent     *string `json:"agent"`
	Order     *string `json:"order"`
	Limit     *int64  `json:"limit"`
	Cursor    *string `json:"cursor"`
	Since     *string `json:"since"`
	// AnswersOnly pages through the answers alone, as get-context's answers_only keeps them.
	AnswersOnly *bool `json:"answers_only"`
	// Offset skips that many messages (0 to maxOffset), instead of a cursor.
	Offset *int64 `json:"offset"`
	// IncludeArchived also pages through the messages the history cap archived; default false.
	IncludeArchived *bool `json:"include_archived"`
}

// SessionHistory is a page of a session's messages, or of the user's across sessions (whose
// messages then carry their session_id).
type SessionHistory struct {
	Messages   []memory.Message `json:"messages"`
	NextCursor *string          `json:"next_cursor"`
	Total      int64            `json:"total"`
}

// SessionHistory pages through a session's messages by seq, or, without session_id, through
// the user's messages of every session by creation time; newest or oldest first, since a time
// when asked.
func (a *App) SessionHistory(ctx context.Context, pr auth.Principal, req SessionHistoryInput) (SessionHistory, error) {
	if req.SessionID == nil {
		return a.userHistory(ctx, pr, req)
	}
	var f apierror.Fields
	sc, id, err := sessionOf(pr, req.ActingFor, req.Agent, req.SessionID, &f)
	if err != nil {
		return SessionHistory{}, err
	}
	order := oneOf(&f, "order", req.Order, historyNewest, historyNewest, historyOldest)
	p := store.HistoryParams{Scope: sc, SessionID: id, Newest: order == historyNewest,
		AnswersOnly: req.AnswersOnly != nil && *req.AnswersOnly}
	p.Limit = int(intField(&f, "limit", req.Limit, historyDefaultLimit, 1, historyMaxLimit))
	p.After = cursorSeqOf(&f, order, req.Cursor)
	p.Offset = offsetField(&f, req.Offset, req.Cursor)
	p.IncludeArchived = req.IncludeArchived != nil && *req.IncludeArchived
	p.Since = timeField(&f, "since", req.Since)
	if err := f.Err(); err != nil {
		return SessionHistory{}, err
	}
	page, err := a.store.SessionHistory(store.MayReadReplica(ctx), p)
	if err != nil {
		return SessionHistory{}, err
	}
	return SessionHistory{Messages: RawMessages(page.Messages), Total: page.Total,
		NextCursor: nextCursor(page.Next, func(seq int64) string { return cursorAfterSeq(order, seq) })}, nil
}

// userHistory is SessionHistory without a session: the user's messages across sessions.
func (a *App) userHistory(ctx context.Context, pr auth.Principal, req SessionHistoryInput) (SessionHistory, error) {
	var f apierror.Fields
	sc, err := scope(pr, req.ActingFor, req.Agent, "", &f)
	if err != nil {
		return SessionHistory{}, err
	}
	order := oneOf(&f, "order", req.Order, historyNewest, historyNewest, historyOldest)
	p := store.UserHistoryParams{Scope: sc, Newest: order == historyNewest,
		AnswersOnly: req.AnswersOnly != nil && *req.AnswersOnly}
	p.Limit = int(intField(&f, "limit", req.Limit, historyDefaultLimit, 1, historyMaxLimit))
	p.After = cursorMessageOf(&f, order, req.Cursor)
	p.Offset = offsetField(&f, req.Offset, req.Cursor)
	p.IncludeArchived = req.IncludeArchived != nil && *req.IncludeArchived
	p.Since = timeField(&f, "since", req.Since)
	if err := f.Err(); err != nil {
		return SessionHistory{}, err
	}
	page, err := a.store.UserHistory(store.MayReadReplica(ctx), p)
	if err != nil {
		return SessionHistory{}, err
	}
	return SessionHistory{Messages: RawMessages(page.Messages), Total: page.Total,
		NextCursor: nextCursor(page.Next, func(k store.MessageKey) string { return cursorAfterMessage(order, k) })}, nil
}

// SessionsClearInput is the request of clear.
type SessionsClearInput struct {
	ActingFor
	Op    *string `json:"op"`
	Agent *string `json:"agent"`
}

// ClearMessages deletes every message of the user (of agent's sessions, when given) and keeps
// the sessions, memories, key/value memory, state and notes (see store.ClearMessages).
func (a *App) ClearMessages(ctx context.Context, pr auth.Principal, req SessionsClearInput) (SessionReset, error) {
	var f apierror.Fields
	sc, err := scope(pr, req.ActingFor, req.Agent, "", &f)
	if err != nil {
		return SessionReset{}, err
	}
	if err := f.Err(); err != nil {
		return SessionReset{}, err
	}
	n, err := a.store.ClearMessages(ctx, sc)
	if err == nil {
		a.notify(ctx)
	}
	return SessionReset{Deleted: n}, err
}

// SessionChangeInput is the request of reset, delete and delete_message; only delete_message
// takes message_id.
type SessionChangeInput struct {
	ActingFor
	Op        *string `json:"op"`
	SessionID *string `json:"session_id"`
	Agent     *string `json:"agent"`
	MessageID *string `json:"message_id"`
}

// SessionReset is the answer of reset and clear: the messages deleted.
type SessionReset struct {
	Deleted int64 `json:"deleted"`
}

// SessionDeleted is the answer of delete and delete_message.
type SessionDeleted struct {
	Deleted bool `json:"deleted"`
}

// sessionChange validates a request of reset or delete.
func sessionChange(pr auth.Principal, op string, req SessionChangeInput) (memory.Scope, uuid.UUID, error) {
	var f apierror.Fields
	unusedForOp(&f, op, "message_id", req.MessageID != nil)
	sc, id, err := sessionOf(pr, req.ActingFor, req.Agent, req.SessionID, &f)
	if err != nil {
		return sc, id, err
	}
	return sc, id, f.Err()
}

// ResetSession deletes a session's messages and keeps the session.
func (a *App) ResetSession(ctx context.Context, pr auth.Principal, req SessionChangeInput) (SessionReset, error) {
	sc, id, err := sessionChange(pr, SessionsOpReset, req)
	if err != nil {
		return SessionReset{}, err
	}
	n, err := a.store.ResetSession(ctx, sc, id)
	if err == nil {
		a.notify(ctx)
	}
	return SessionReset{Deleted: n}, err
}

// DeleteSession deletes a session and its messages.
func (a *App) DeleteSession(ctx context.Context, pr auth.Principal, req SessionChangeInput) (SessionDeleted, error) {
	sc, id, err := sessionChange(pr, SessionsOpDelete, req)
	if err != nil {
		return SessionDeleted{}, err
	}
	if err := a.store.DeleteSession(ctx, sc, id); err != nil {
		return SessionDeleted{}, err
	}
	a.notify(ctx)
	return SessionDeleted{Deleted: true}, nil
}

// DeleteMessage deletes one message of a session, or, without session_id (absent or null), the
// caller's message of that id in whichever of the caller's sessions holds it (see
// store.DeleteMessage).
func (a *App) DeleteMessage(ctx context.Context, pr auth.Principal, req SessionChangeInput) (SessionDeleted, error) {
	var f apierror.Fields
	sc, err := scope(pr, req.ActingFor, req.Agent, "", &f)
	if err != nil {
		return SessionDeleted{}, err
	}
	session := parseUUID(&f, "session_id", req.SessionID, false)
	msgID := messageIDField(&f, "message_id", req.MessageID, true)
	if err := f.Err(); err != nil {
		return SessionDeleted{}, err
	}
	if err := a.store.DeleteMessage(ctx, sc, session, *msgID); err != nil {
		return SessionDeleted{}, err
	}
	a.notify(ctx)
	return SessionDeleted{Deleted: true}, nil
}

// SetSessionTitleInput is the request of set_title.
type SetSessionTitleInput struct {
	ActingFor
	Op        *string         `json:"op"`
	SessionID *string         `json:"session_id"`
	Agent     *string         `json:"agent"`
	Title     json.RawMessage `json:"title"`
}

// SessionTitle is the answer of set_title.
type SessionTitle struct {
	SessionID uuid.UUID `json:"session_id"`
	Title     *string   `json:"title"`
}

// SetSessionTitle sets a title of 1 to 200 characters that is not only white space, or
// clears it with null. The title is required: an absent one is a mistake, not a clear.
func (a *App) SetSessionTitle(ctx context.Context, pr auth.Principal, req SetSessionTitleInput) (SessionTitle, error) {
	var f apierror.Fields
	sc, id, err := sessionOf(pr, req.ActingFor, req.Agent, req.SessionID, &f)
	if err != nil {
		return SessionTitle{}, err
	}
	var title *string
	raw := bytes.TrimSpace(req.Title)
	switch {
	case len(raw) == 0:
		f.Add("title", "is required (null clears the title)")
	case string(raw) == "null":
	default:
		var t string
		if err := json.Unmarshal(raw, &t); err != nil {
			f.Add("title", "must be a string or null")
			break
		}
		switch n := memory.CharCount(t); {
		case n < 1 || n > sessionTitleMaxChars:
			f.Addf("title", "must be 1 to %d characters", sessionTitleMaxChars)
		case strings.TrimSpace(t) == "":
			f.Add("title", "must not be blank")
		case hasControl(t):
			f.Add("title", "must not contain control characters")
		default:
			title = &t
		}
	}
	if err := f.Err(); err != nil {
		return SessionTitle{}, err
	}
	if err := a.store.SetSessionTitle(ctx, sc, id, title); err != nil {
		return SessionTitle{}, err
	}
	return SessionTitle{SessionID: id, Title: title}, nil
}

// SetSessionMetadataInput is the request of set_metadata.
type SetSessionMetadataInput struct {
	ActingFor
	Op        *string         `json:"op"`
	SessionID *string         `json:"session_id"`
	Agent     *string         `json:"agent"`
	Metadata  json.RawMessage `json:"metadata"`
}

// SessionMetadata is the answer of set_metadata.
type SessionMetadata struct {
	SessionID uuid.UUID       `json:"session_id"`
	Metadata  json.RawMessage `json:"metadata"`
}

// SetSessionMetadata replaces a session's metadata with a JSON object of at most 16 KiB, as a
// message's metadata is bounded; {} clears it. The object is required: an absent or null one is
// a mistake, not a clear.
func (a *App) SetSessionMetadata(ctx context.Context, pr auth.Principal, req SetSessionMetadataInput) (SessionMetadata, error) {
	var f apierror.Fields
	sc, id, err := sessionOf(pr, req.ActingFor, req.Agent, req.SessionID, &f)
	if err != nil {
		return SessionMetadata{}, err
	}
	before := len(f)
	md := objectField(&f, "metadata", req.Metadata, maxMetadataBytes)
	if md == nil && len(f) == before {
		f.Add("metadata", "is required: a JSON object ({} clears the metadata)")
	}
	if err := f.Err(); err != nil {
		return SessionMetadata{}, err
	}
	if err := a.store.SetSessionMetadata(ctx, sc, id, md); err != nil {
		return SessionMetadata{}, err
	}
	return SessionMetadata{SessionID: id, Metadata: md}, nil
}

// sessionOf validates whose session a request names.
func sessionOf(p auth.Principal, a ActingFor, agent, sessionID *string, f *apierror.Fields) (memory.Scope, uuid.UUID, error) {
	sc, err := scope(p, a, agent, "", f)
	if err != nil {
		return sc, uuid.Nil, err
	}
	var id uuid.UUID
	if p := parseUUID(f, "session_id", sessionID, true); p != nil {
		id = *p
	}
	return sc, id, nil
}

// offsetField validates offset pagination: 0 to maxOffset items to skip, and never with a
// cursor, whose page it would contradict.
func offsetField(f *apierror.Fields, offset *int64, cursor *string) int {
	if offset == nil {
		return 0
	}
	if cursor != nil {
		f.Add("offset", "cannot be combined with cursor; page with one or the other")
		return 0
	}
	return int(intField(f, "offset", offset, 0, 0, maxOffset))
}
