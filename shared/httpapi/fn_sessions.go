package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/apierror"
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
)

// The operations of the sessions function.
const (
	sessionsOpList          = "list"
	sessionsOpHistory       = "history"
	sessionsOpReset         = "reset"
	sessionsOpDelete        = "delete"
	sessionsOpDeleteMessage = "delete_message"
	sessionsOpSetTitle      = "set_title"
)

// The orders of sessions history.
const (
	historyNewest = "newest"
	historyOldest = "oldest"
)

func init() {
	functions["sessions"] = function{run: (*Server).sessions}
}

// sessions manages a user's sessions: list them, page through one's messages, reset, delete,
// delete one message, set a title. A session that is missing, expired or someone else's is
// not found (404), whatever the operation.
func (s *Server) sessions(ctx context.Context, c *call) (int, any, error) {
	op, err := opOf(c.body, sessionsOpList, sessionsOpHistory, sessionsOpReset, sessionsOpDelete, sessionsOpDeleteMessage, sessionsOpSetTitle)
	if err != nil {
		return 0, nil, err
	}
	switch op {
	case sessionsOpList:
		return s.listSessions(ctx, c)
	case sessionsOpHistory:
		return s.sessionHistory(ctx, c)
	case sessionsOpSetTitle:
		return s.setSessionTitle(ctx, c)
	default:
		return s.changeSession(ctx, c, op)
	}
}

type listSessionsRequest struct {
	actingFor
	Op     *string `json:"op"`
	Agent  *string `json:"agent"`
	Limit  *int64  `json:"limit"`
	Cursor *string `json:"cursor"`
}

type sessionList struct {
	Sessions   []store.SessionSummary `json:"sessions"`
	NextCursor *string                `json:"next_cursor"`
}

func (s *Server) listSessions(ctx context.Context, c *call) (int, any, error) {
	var req listSessionsRequest
	if err := decode(c.body, &req); err != nil {
		return 0, nil, err
	}
	var f apierror.Fields
	sc, err := c.scope(req.actingFor, req.Agent, "", &f)
	if err != nil {
		return 0, nil, err
	}
	p := store.ListSessionsParams{Scope: sc}
	p.Limit = int(intField(&f, "limit", req.Limit, sessionsDefaultLimit, 1, sessionsMaxLimit))
	if t, id, ok := cursorKeyOf(&f, cursorSessions, req.Cursor); ok {
		p.After = &store.SessionKey{LastActiveAt: t, ID: id}
	}
	if err := f.Err(); err != nil {
		return 0, nil, err
	}
	page, err := s.store.ListSessions(ctx, p)
	if err != nil {
		return 0, nil, err
	}
	out := sessionList{Sessions: page.Sessions}
	if page.Next != nil {
		cur := cursorAfterKey(cursorSessions, page.Next.LastActiveAt, page.Next.ID)
		out.NextCursor = &cur
	}
	return http.StatusOK, out, nil
}

// The requests of the operations on one session. Agent, when given, must be the session's
// agent; without it the session may be of any agent of the user. (Flat structs: encoding/json
// would name a field of a nested embedded struct by its Go path in errors.)
type sessionHistoryRequest struct {
	actingFor
	Op        *string `json:"op"`
	SessionID *string `json:"session_id"`
	Agent     *string `json:"agent"`
	Order     *string `json:"order"`
	Limit     *int64  `json:"limit"`
	Cursor    *string `json:"cursor"`
}

type sessionHistoryResponse struct {
	Messages   []memory.Message `json:"messages"`
	NextCursor *string          `json:"next_cursor"`
	Total      int64            `json:"total"`
}

func (s *Server) sessionHistory(ctx context.Context, c *call) (int, any, error) {
	var req sessionHistoryRequest
	if err := decode(c.body, &req); err != nil {
		return 0, nil, err
	}
	var f apierror.Fields
	sc, id, err := c.sessionOf(req.actingFor, req.Agent, req.SessionID, &f)
	if err != nil {
		return 0, nil, err
	}
	order := oneOf(&f, "order", req.Order, historyNewest, historyNewest, historyOldest)
	p := store.HistoryParams{Scope: sc, SessionID: id, Newest: order == historyNewest}
	p.Limit = int(intField(&f, "limit", req.Limit, historyDefaultLimit, 1, historyMaxLimit))
	p.After = cursorSeqOf(&f, order, req.Cursor)
	if err := f.Err(); err != nil {
		return 0, nil, err
	}
	page, err := s.store.SessionHistory(ctx, p)
	if err != nil {
		return 0, nil, err
	}
	out := sessionHistoryResponse{Messages: rawMessages(page.Messages), Total: page.Total}
	if page.Next != nil {
		cur := cursorAfterSeq(order, *page.Next)
		out.NextCursor = &cur
	}
	return http.StatusOK, out, nil
}

// sessionChangeRequest is the request of reset, delete and delete_message; only
// delete_message takes message_id.
type sessionChangeRequest struct {
	actingFor
	Op        *string `json:"op"`
	SessionID *string `json:"session_id"`
	Agent     *string `json:"agent"`
	MessageID *string `json:"message_id"`
}

// changeSession runs reset, delete and delete_message.
func (s *Server) changeSession(ctx context.Context, c *call, op string) (int, any, error) {
	var req sessionChangeRequest
	if err := decode(c.body, &req); err != nil {
		return 0, nil, err
	}
	var f apierror.Fields
	if op != sessionsOpDeleteMessage {
		unusedForOp(&f, op, "message_id", req.MessageID != nil)
	}
	sc, id, err := c.sessionOf(req.actingFor, req.Agent, req.SessionID, &f)
	if err != nil {
		return 0, nil, err
	}
	var msgID *uuid.UUID
	if op == sessionsOpDeleteMessage {
		msgID = parseUUID(&f, "message_id", req.MessageID, true)
	}
	if err := f.Err(); err != nil {
		return 0, nil, err
	}
	switch op {
	case sessionsOpReset:
		n, err := s.store.ResetSession(ctx, sc, id)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, map[string]int64{"deleted": n}, nil
	case sessionsOpDelete:
		err = s.store.DeleteSession(ctx, sc, id)
	default:
		err = s.store.DeleteMessage(ctx, sc, id, *msgID)
	}
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]bool{"deleted": true}, nil
}

type setSessionTitleRequest struct {
	actingFor
	Op        *string         `json:"op"`
	SessionID *string         `json:"session_id"`
	Agent     *string         `json:"agent"`
	Title     json.RawMessage `json:"title"`
}

type sessionTitleResponse struct {
	SessionID uuid.UUID `json:"session_id"`
	Title     *string   `json:"title"`
}

// setSessionTitle sets a title of 1 to 200 characters that is not only white space, or clears
// it with null. The title is required: an absent one is a mistake, not a clear.
func (s *Server) setSessionTitle(ctx context.Context, c *call) (int, any, error) {
	var req setSessionTitleRequest
	if err := decode(c.body, &req); err != nil {
		return 0, nil, err
	}
	var f apierror.Fields
	sc, id, err := c.sessionOf(req.actingFor, req.Agent, req.SessionID, &f)
	if err != nil {
		return 0, nil, err
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
		return 0, nil, err
	}
	if err := s.store.SetSessionTitle(ctx, sc, id, title); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, sessionTitleResponse{SessionID: id, Title: title}, nil
}

// sessionOf validates whose session a request names.
func (c *call) sessionOf(a actingFor, agent, sessionID *string, f *apierror.Fields) (memory.Scope, uuid.UUID, error) {
	sc, err := c.scope(a, agent, "", f)
	if err != nil {
		return sc, uuid.Nil, err
	}
	var id uuid.UUID
	if p := parseUUID(f, "session_id", sessionID, true); p != nil {
		id = *p
	}
	return sc, id, nil
}

// ---- cursors ----

// A cursor is opaque to clients: base64url (unpadded) of a kind byte and the key of the last
// item of the page. The kind keeps a cursor of one listing from being taken by another.
const (
	cursorSessions      = 's'
	cursorMemories      = 'm'
	cursorHistoryNewest = 'n'
	cursorHistoryOldest = 'o'
)

// Keys outside these bounds were never issued; keeping them out also keeps every decoded time
// within what PostgreSQL's timestamptz holds.
var (
	cursorMinMicros = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	cursorMaxMicros = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC).UnixMicro()
)

const cursorInvalid = "is not a cursor of this listing; pass next_cursor of the previous page unchanged"

// decodeCursor reads a cursor's bytes. encoding/base64 skips \r and \n even when strict, so
// they are refused first: a cursor is read only as it was written.
func decodeCursor(v string) ([]byte, error) {
	if strings.ContainsAny(v, "\r\n") {
		return nil, base64.CorruptInputError(strings.IndexAny(v, "\r\n"))
	}
	return base64.RawURLEncoding.Strict().DecodeString(v)
}

// cursorAfterKey is the cursor after an item ordered by (time, id).
func cursorAfterKey(kind byte, t time.Time, id uuid.UUID) string {
	b := make([]byte, 0, 25)
	b = append(b, kind)
	b = binary.BigEndian.AppendUint64(b, uint64(t.UnixMicro()))
	b = append(b, id[:]...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// cursorKeyOf reads a cursor of cursorAfterKey; ok is false when there is none or it is
// invalid (then recorded in f).
func cursorKeyOf(f *apierror.Fields, kind byte, v *string) (time.Time, uuid.UUID, bool) {
	if v == nil {
		return time.Time{}, uuid.Nil, false
	}
	b, err := decodeCursor(*v)
	if err != nil || len(b) != 25 || b[0] != kind {
		f.Add("cursor", cursorInvalid)
		return time.Time{}, uuid.Nil, false
	}
	us := int64(binary.BigEndian.Uint64(b[1:9]))
	if us < cursorMinMicros || us > cursorMaxMicros {
		f.Add("cursor", cursorInvalid)
		return time.Time{}, uuid.Nil, false
	}
	id, _ := uuid.FromBytes(b[9:])
	return time.UnixMicro(us).UTC(), id, true
}

// cursorAfterSeq is the cursor after a message of a history in order.
func cursorAfterSeq(order string, seq int64) string {
	kind := byte(cursorHistoryOldest)
	if order == historyNewest {
		kind = cursorHistoryNewest
	}
	b := binary.BigEndian.AppendUint64([]byte{kind}, uint64(seq))
	return base64.RawURLEncoding.EncodeToString(b)
}

// cursorSeqOf reads a cursor of cursorAfterSeq; a cursor of the other order is invalid.
func cursorSeqOf(f *apierror.Fields, order string, v *string) *int64 {
	if v == nil {
		return nil
	}
	kind := byte(cursorHistoryOldest)
	if order == historyNewest {
		kind = cursorHistoryNewest
	}
	b, err := decodeCursor(*v)
	if err != nil || len(b) != 9 {
		f.Add("cursor", cursorInvalid)
		return nil
	}
	if b[0] != kind {
		if b[0] == cursorHistoryNewest || b[0] == cursorHistoryOldest {
			f.Add("cursor", "belongs to the other order; page with the order it was issued for")
		} else {
			f.Add("cursor", cursorInvalid)
		}
		return nil
	}
	seq := int64(binary.BigEndian.Uint64(b[1:]))
	if seq < 0 {
		f.Add("cursor", cursorInvalid)
		return nil
	}
	return &seq
}
