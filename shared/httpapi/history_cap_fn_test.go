package httpapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/memory"
)

// capEnvFn is a server whose deployment keeps 500 messages of a session live, over a
// database of its own (the sweep caps every session in it).
func capEnvFn(t *testing.T, h memory.HistoryCap) *env {
	t.Helper()
	return buildEnv(t, envConfig{own: true, app: app.Config{History: h}})
}

// capTurns commits n messages to a session in turns of 100, the messages of turn k with client
// ids "<prefix>-<i>" when prefix is not empty.
func capTurns(e *env, token string, sid uuid.UUID, n int, prefix string, extra ...any) {
	e.t.Helper()
	for i := 0; i < n; i += 100 {
		var msgs []map[string]any
		for j := i; j < min(i+100, n); j++ {
			m := map[string]any{"role": []string{"user", "assistant"}[j%2], "content": fmt.Sprintf("message %d", j+1)}
			if prefix != "" {
				m["id"] = fmt.Sprintf("%s-%d", prefix, j+1)
			}
			msgs = append(msgs, m)
		}
		body := map[string]any{"session_id": sid, "messages": msgs}
		for k := 0; k+1 < len(extra); k += 2 {
			body[extra[k].(string)] = extra[k+1]
		}
		e.call(token, "commit-turn", body).must(e.t, http.StatusCreated)
	}
}

func capSweep(e *env) map[string]any {
	e.t.Helper()
	e.app.WaitEmbedded() // the deferred embedding of the turns is done: no row is held
	return e.call(e.serviceToken(), "sweep-expired", map[string]any{}).must(e.t, http.StatusOK).body
}

// After the sweep capped a session at 500 live messages, sessions history shows the live ones
// by default and, with include_archived, the whole history in order, by cursor and by offset;
// a retry of an archived message's turn stores nothing again; delete_message finds an archived
// message by id, with or without its session; another user sees none of it.
func TestHistoryCapArchiveThroughSessions(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: commits hundreds of messages to cap")
	}
	e := capEnvFn(t, memory.HistoryCap{Keep: 500})
	u := e.newUser("t1")
	sid := uuid.New()
	capTurns(e, u.token, sid, 700, "c")
	sw := capSweep(e)
	if c := obj(sw["capped"]); c["archived"] != 200.0 || c["deleted"] != 0.0 || c["sessions"] != 1.0 {
		t.Fatalf("sweep answered %v", sw)
	}

	live := smOp(e, u.token, "sessions", "history", "session_id", sid, "order", "oldest", "limit", 5).must(t, http.StatusOK)
	if got := smSeqs(live); !slices.Equal(got, seqRange(201, 205)) || live.body["total"] != 500.0 {
		t.Errorf("history without the archive: %v total %v", got, live.body["total"])
	}
	var seqs []int
	var cursor any
	for page := 0; ; page++ {
		r := smOp(e, u.token, "sessions", "history", "session_id", sid, "order", "oldest", "limit", 200,
			"include_archived", true, "cursor", cursor).must(t, http.StatusOK)
		if r.body["total"] != 700.0 {
			t.Fatalf("total with the archive %v", r.body["total"])
		}
		seqs = append(seqs, smSeqs(r)...)
		if cursor = r.body["next_cursor"]; cursor == nil || page > 5 {
			break
		}
	}
	if !slices.Equal(seqs, seqRange(1, 700)) {
		t.Errorf("history with the archive, paged: %d messages from %d", len(seqs), seqs[0])
	}
	r := smOp(e, u.token, "sessions", "history", "session_id", sid, "include_archived", true, "offset", 598, "limit", 5).must(t, http.StatusOK)
	if got := smSeqs(r); !slices.Equal(got, []int{102, 101, 100, 99, 98}) {
		t.Errorf("newest first with the archive, offset 598: %v", got)
	}
	msg := obj(list(smOp(e, u.token, "sessions", "history", "session_id", sid, "order", "oldest", "limit", 1,
		"include_archived", true).must(t, http.StatusOK).body["messages"])[0])
	if msg["id"] != "c-1" || msg["content"] != "message 1" || msg["role"] != "user" {
		t.Errorf("the first archived message reads %v", msg)
	}
	user := smOp(e, u.token, "sessions", "history", "include_archived", true, "limit", 1).must(t, http.StatusOK)
	if user.body["total"] != 700.0 {
		t.Errorf("the user's history with the archive counts %v", user.body["total"])
	}
	if n := smOp(e, u.token, "sessions", "history", "limit", 1).must(t, http.StatusOK).body["total"]; n != 500.0 {
		t.Errorf("the user's history without the archive counts %v", n)
	}

	// A client saving its whole history again stores nothing twice.
	r = e.call(u.token, "commit-turn", map[string]any{"session_id": sid,
		"messages": []map[string]any{{"role": "user", "content": "message 1", "id": "c-1"}}}).must(t, http.StatusCreated)
	if got := obj(list(r.body["messages"])[0])["seq"]; got != 1.0 {
		t.Errorf("a retry of an archived message answers seq %v", got)
	}
	if n := e.count("messages", "session_id = $1", sid); n != 500 {
		t.Errorf("a retry of an archived message stored it again: %d live", n)
	}

	// Another user sees nothing of it, whatever they ask.
	other := e.newUser("t1")
	smOp(e, other.token, "sessions", "history", "session_id", sid, "include_archived", true).must(t, http.StatusNotFound)
	if n := smOp(e, other.token, "sessions", "history", "include_archived", true).must(t, http.StatusOK).body["total"]; n != 0.0 {
		t.Errorf("another user's history with the archive counts %v", n)
	}
	smOp(e, other.token, "sessions", "delete_message", "message_id", "c-2").must(t, http.StatusNotFound)
	smOp(e, smToken(t, u.id, "t2"), "sessions", "delete_message", "message_id", "c-2").must(t, http.StatusNotFound)

	// delete_message finds archived messages, by id alone or with the session.
	smOp(e, u.token, "sessions", "delete_message", "message_id", "c-2").must(t, http.StatusOK)
	smOp(e, u.token, "sessions", "delete_message", "session_id", sid, "message_id", "c-3").must(t, http.StatusOK)
	smOp(e, u.token, "sessions", "delete_message", "message_id", "c-3").must(t, http.StatusNotFound)
	if n := e.count("messages_archive", "session_id = $1", sid); n != 198 {
		t.Errorf("%d archived messages left, want 198", n)
	}
}

// Every way to erase messages erases the archived ones too: reset (counting them), clear
// (counting them), and the deletion of the session; an archived message's client id can be
// used again after a reset.
func TestHistoryCapArchiveIsErased(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: commits hundreds of messages to cap")
	}
	e := capEnvFn(t, memory.HistoryCap{Keep: 500})
	u := e.newUser("")
	reset, cleared, deleted, kept := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	capTurns(e, u.token, reset, 600, "r")
	capTurns(e, u.token, cleared, 600, "")
	capTurns(e, u.token, deleted, 600, "")
	other := e.newUser("")
	capTurns(e, other.token, kept, 600, "")
	capSweep(e)
	if n := e.count("messages_archive", ""); n != 400 {
		t.Fatalf("%d archived, want 100 of each session", n)
	}
	r := smOp(e, u.token, "sessions", "reset", "session_id", reset).must(t, http.StatusOK)
	if r.body["deleted"] != 600.0 {
		t.Errorf("reset deleted %v, want the 500 live and 100 archived", r.body["deleted"])
	}
	e.call(u.token, "commit-turn", map[string]any{"session_id": reset,
		"messages": []map[string]any{{"role": "user", "content": "again", "id": "r-1"}}}).must(t, http.StatusCreated)
	if n := e.count("messages", "session_id = $1 and id = 'r-1' and seq = 601", reset); n != 1 {
		t.Errorf("after a reset, an archived message's id is not free again")
	}
	smOp(e, u.token, "sessions", "delete", "session_id", deleted).must(t, http.StatusOK)
	if n := e.count("messages_archive", "session_id = $1", deleted); n != 0 {
		t.Errorf("a deleted session left %d archived messages", n)
	}
	r = smOp(e, u.token, "sessions", "clear").must(t, http.StatusOK)
	if r.body["deleted"] != 601.0 {
		t.Errorf("clear deleted %v, want the 1 message after the reset and the other session's 600", r.body["deleted"])
	}
	if n := e.count("messages_archive", "user_id = $1", u.id); n != 0 {
		t.Errorf("clear left %d archived messages", n)
	}
	if n := e.count("messages_archive", "user_id = $1", other.id); n != 100 {
		t.Errorf("another user's archive changed: %d", n)
	}
	// forget-user: TestForgetUser seeds the archive (knSeedSQL) and proves it goes.
	e.call(other.token, "forget-user", nil).must(t, http.StatusOK)
	if n := e.count("messages_archive", "user_id = $1", other.id); n != 0 {
		t.Errorf("forget-user left %d archived messages", n)
	}
}

// The sweep deletes expired archived messages, and keeps a session that has only archived
// messages left until they expire.
func TestHistoryCapArchiveExpires(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: commits hundreds of messages to cap")
	}
	e := capEnvFn(t, memory.HistoryCap{Keep: 500})
	u := e.newUser("")
	sid := uuid.New()
	capTurns(e, u.token, sid, 600, "")
	capSweep(e)
	e.exec(`update agentmem.messages set expires_at = now() - interval '1 second' where session_id = $1`, sid)
	e.exec(`update agentmem.sessions set expires_at = now() - interval '1 second' where id = $1`, sid)
	sw := capSweep(e)
	if d := obj(sw["deleted"]); d["messages"] != 500.0 || d["archived_messages"] != 0.0 || d["sessions"] != 0.0 {
		t.Fatalf("sweep with live archived messages: %v", sw)
	}
	e.exec(`update agentmem.messages_archive set expires_at = now() - interval '1 second' where session_id = $1 and seq <= 40`, sid)
	r := smOp(e, e.serviceToken(), "sessions", "history", "user_id", u.id, "include_archived", true).must(t, http.StatusOK)
	if r.body["total"] != 60.0 {
		t.Errorf("expired archived messages are counted: %v", r.body["total"])
	}
	e.exec(`update agentmem.messages_archive set expires_at = now() - interval '1 second' where session_id = $1`, sid)
	sw = capSweep(e)
	if d := obj(sw["deleted"]); d["archived_messages"] != 100.0 || d["sessions"] != 1.0 {
		t.Fatalf("sweep of the expired archive: %v", sw)
	}
}

// keep_messages on commit-turn is a service's: a user gets 400, as does a value outside 0 or
// 500 to 1,000,000, and nothing is stored; a service's value becomes the session's cap.
func TestCommitTurnKeepMessages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	smCommit(e, u.token, sid, "", "a")
	before := smSnapshot(e, u.id)
	svc := e.serviceToken()
	turn := func(kv ...any) map[string]any {
		b := map[string]any{"session_id": sid, "messages": []map[string]any{{"role": "user", "content": "b"}}}
		for i := 0; i+1 < len(kv); i += 2 {
			b[kv[i].(string)] = kv[i+1]
		}
		return b
	}
	for _, tc := range []struct {
		name, token string
		body        map[string]any
		message     string
	}{
		{"a user", u.token, turn("keep_messages", 500), "may be given by service callers only"},
		{"below the window", svc, turn("user_id", u.id, "keep_messages", 499), "must be 0 (no cap) or 500 to 1000000"},
		{"negative", svc, turn("user_id", u.id, "keep_messages", -1), "must be 0 (no cap) or 500 to 1000000"},
		{"too many", svc, turn("user_id", u.id, "keep_messages", 1_000_001), "must be 0 (no cap) or 500 to 1000000"},
		{"a string", svc, turn("user_id", u.id, "keep_messages", "500"), "must be an integer, not string"},
		{"a fraction", svc, turn("user_id", u.id, "keep_messages", 500.5), "must be an integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.call(tc.token, "commit-turn", tc.body)
			wantProblem(t, r, http.StatusBadRequest, "invalid_request", "keep_messages")
			if got := fieldMessage(r, "keep_messages"); got != tc.message {
				t.Errorf("keep_messages: %q, want %q", got, tc.message)
			}
		})
	}
	if smSnapshot(e, u.id) != before {
		t.Fatal("a refused commit changed something")
	}
	keep := func() any {
		var k *int
		conn := e.adminConn()
		defer conn.Close(t.Context())
		if err := conn.QueryRow(t.Context(), `select keep_messages from agentmem.sessions where id = $1`, sid).Scan(&k); err != nil {
			t.Fatal(err)
		}
		if k == nil {
			return nil
		}
		return *k
	}
	if keep() != nil {
		t.Fatal("a session has a cap before any is set")
	}
	e.call(svc, "commit-turn", turn("user_id", u.id, "keep_messages", 2000)).must(t, http.StatusCreated)
	if keep() != 2000 {
		t.Errorf("keep_messages %v, want 2000", keep())
	}
	e.call(svc, "commit-turn", turn("user_id", u.id)).must(t, http.StatusCreated)
	if keep() != 2000 {
		t.Errorf("a turn without keep_messages changed the cap to %v", keep())
	}
	e.call(svc, "commit-turn", turn("user_id", u.id, "keep_messages", 0)).must(t, http.StatusCreated)
	if keep() != 0 {
		t.Errorf("keep_messages %v, want 0", keep())
	}
	// Another agent's session with the same id is not the caller's: nothing changes.
	e.call(svc, "commit-turn", turn("user_id", u.id, "agent", "other", "keep_messages", 700)).must(t, http.StatusNotFound)
	if keep() != 0 {
		t.Errorf("a refused turn set the cap to %v", keep())
	}
	// include_archived is a boolean.
	r := e.call(u.token, "sessions", map[string]any{"op": "history", "session_id": sid, "include_archived": "yes"})
	wantProblem(t, r, http.StatusBadRequest, "invalid_request", "include_archived")
	r = e.call(u.token, "sessions", map[string]any{"op": "list", "include_archived": true})
	wantProblem(t, r, http.StatusBadRequest, "invalid_request", "include_archived")
}
