package httpapi_test

import (
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/memory"
)

// aoTurn is a turn of an agent that called tools, every message with a client id prefixed by
// tag: system, user, a call with no text, its result, a call with text, its result, the answer.
func aoTurn(sid uuid.UUID, tag string) map[string]any {
	id := func(n string) string { return tag + "-" + n }
	withText := ctMsg("assistant", "Let me check the units.", "id", id("a2"),
		"tool_calls", []any{ctToolCall("c2"+tag, "units", `{"q":"units"}`)})
	return ctTurn(sid,
		ctMsg("system", "You are terse.", "id", id("s")),
		ctMsg("user", "Which units do I like?", "id", id("u")),
		ctMsg("assistant", "", "id", id("a1"), "tool_calls", []any{ctToolCall("c1"+tag, "lookup", `{"q":"ada"}`)}),
		ctMsg("tool", `{"ok":true}`, "id", id("t1"), "tool_call_id", "c1"+tag),
		withText,
		ctMsg("tool", `{"units":"metric"}`, "id", id("t2"), "tool_call_id", "c2"+tag),
		ctMsg("assistant", "Metric.", "id", id("a3")),
	)
}

// commit-turn's answers_only beside TestCommitTurnAnswersOnly: the stored messages take
// consecutive seqs, are estimated without their calls, and the answer lists them alone, in
// order, with their client ids. A retry with the same client ids answers the same places; one
// with the same Idempotency-Key replays, the key with the flag changed is a conflict; the next
// turn numbers on after the stored ones. A turn with nothing left to store still stores its
// memories and creates its session, and another agent's session is not found for it, as for any
// turn.
func TestCommitTurnAnswersOnlyPlacesAndOwnership(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	turn := aoTurn(sid, "one")
	turn["answers_only"] = true

	res := ctCommit(t, e, u.token, turn)
	var ids []string
	var seqs []int64
	for _, m := range res.Messages {
		ids, seqs = append(ids, m.ID), append(seqs, m.Seq)
	}
	if want := []string{"one-s", "one-u", "one-a2", "one-a3"}; !slices.Equal(ids, want) {
		t.Fatalf("answered ids %v, want %v", ids, want)
	}
	if !slices.Equal(seqs, []int64{1, 2, 3, 4}) {
		t.Fatalf("seqs %v, want 1 to 4", seqs)
	}
	rows := ctMessages(t, e, sid)
	var roles []string
	for _, r := range rows {
		roles = append(roles, r.Role)
	}
	if want := []string{"system", "user", "assistant", "assistant"}; !slices.Equal(roles, want) {
		t.Fatalf("stored roles %v, want %v", roles, want)
	}
	if n := e.count("messages", "session_id = $1 and tool_calls is not null", sid); n != 0 {
		t.Errorf("%d stored messages keep tool calls", n)
	}
	if got, want := ctScalar[int](t, e, `select token_estimate from agentmem.messages where session_id = $1 and id = 'one-a2'`, sid),
		memory.EstimateTokens("Let me check the units.", nil, nil, nil); got != want {
		t.Errorf("token estimate %d, want %d (the text without the calls)", got, want)
	}

	// A retry: the client ids dedupe what was stored, the rest is left out again.
	again := ctCommit(t, e, u.token, turn)
	if !reflect.DeepEqual(again, res) {
		t.Errorf("retry answered %+v, want %+v", again, res)
	}
	if n := e.count("messages", "session_id = $1", sid); n != 4 {
		t.Errorf("%d messages after the retry, want 4", n)
	}

	// With an Idempotency-Key: stored once, replayed.
	sid2 := uuid.New()
	keyed := aoTurn(sid2, "two")
	keyed["answers_only"] = true
	first := e.call(u.token, "commit-turn", keyed, "Idempotency-Key", "ao-"+sid2.String()).must(t, http.StatusCreated)
	replay := e.call(u.token, "commit-turn", keyed, "Idempotency-Key", "ao-"+sid2.String()).must(t, http.StatusCreated)
	if replay.header.Get("Idempotent-Replayed") != "true" || string(replay.raw) != string(first.raw) {
		t.Errorf("replay %s (%q), want %s", replay.raw, replay.header.Get("Idempotent-Replayed"), first.raw)
	}
	if n := e.count("messages", "session_id = $1", sid2); n != 4 {
		t.Errorf("%d messages of the keyed turn, want 4", n)
	}
	// The same key without answers_only is another request.
	delete(keyed, "answers_only")
	e.call(u.token, "commit-turn", keyed, "Idempotency-Key", "ao-"+sid2.String()).must(t, http.StatusConflict)

	// The next turn numbers on from the stored ones.
	next := ctCommit(t, e, u.token, map[string]any{"session_id": sid.String(), "answers_only": true,
		"messages": []any{ctMsg("user", "Thanks."), ctCalls("c9"), ctResult("c9"), ctMsg("assistant", "You are welcome.")}})
	if len(next.Messages) != 2 || next.Messages[0].Seq != 5 || next.Messages[1].Seq != 6 {
		t.Errorf("next turn %+v, want seqs 5 and 6", next.Messages)
	}

	// A turn with no answer stores its memories only, and still owns its session: another
	// agent's session is not found, and nothing is stored.
	empty := map[string]any{"session_id": sid.String(), "answers_only": true,
		"messages": []any{ctCalls("c7"), ctResult("c7")},
		"memories": []any{map[string]any{"content": "User likes metric units."}}}
	got := ctCommit(t, e, u.token, empty)
	if len(got.Messages) != 0 || len(got.Memories) != 1 {
		t.Errorf("turn without answers: %+v, want no message and one memory", got)
	}
	if n := e.count("messages", "session_id = $1", sid); n != 6 {
		t.Errorf("%d messages after a turn without answers, want 6", n)
	}
	empty["agent"] = "other-agent"
	empty["memories"] = []any{map[string]any{"content": "User likes imperial units."}}
	wantProblem(t, e.call(u.token, "commit-turn", empty), http.StatusNotFound, "not_found")
	if n := e.count("memories", "user_id = $1", u.id); n != 1 {
		t.Errorf("%d memories after a refused turn, want 1", n)
	}
	// A fresh session with nothing to store is created, as a commit creates it.
	sid3 := uuid.New()
	ctCommit(t, e, u.token, map[string]any{"session_id": sid3.String(), "answers_only": true,
		"messages": []any{ctCalls("c8"), ctResult("c8")}})
	if n := e.count("sessions", "id = $1 and user_id = $2", sid3, u.id); n != 1 {
		t.Errorf("the session of a turn without answers was not created")
	}

	// Every message is checked as given, left out or not.
	bad := aoTurn(uuid.New(), "bad")
	bad["answers_only"] = true
	bad["messages"].([]any)[3].(map[string]any)["tool_call_id"] = ""
	wantProblem(t, e.call(u.token, "commit-turn", bad), http.StatusBadRequest, "invalid_request", "messages[3].tool_call_id")
	wantProblem(t, e.call(u.token, "commit-turn", map[string]any{"session_id": uuid.NewString(), "answers_only": "yes",
		"messages": []any{ctMsg("user", "Hi.")}}), http.StatusBadRequest, "invalid_request")
}

// The event of a turn committed with answers_only tells the adapters of the stored messages
// alone: their seq range, and no tool message or tool call.
func TestCommitTurnAnswersOnlyJobs(t *testing.T) {
	t.Parallel()
	e := newJobsEnv(t, app.JobsConfig{}, nil)
	u := e.newUser("")
	sid := uuid.New()
	turn := aoTurn(sid, "jobs")
	turn["answers_only"] = true
	ctCommit(t, e.env, u.token, turn)
	if _, done, _, _, _ := e.process(t); done != 1 {
		t.Fatalf("%d jobs done, want 1", done)
	}
	evs := e.rec.Events()
	if len(evs) != 1 || evs[0].Type != adapter.TurnCommitted {
		t.Fatalf("events %+v", evs)
	}
	ev := evs[0]
	if *ev.SeqFrom != 1 || *ev.SeqTo != 4 || len(ev.Messages) != 4 {
		t.Fatalf("event seqs %d to %d with %d messages, want 1 to 4 with 4", *ev.SeqFrom, *ev.SeqTo, len(ev.Messages))
	}
	for _, m := range ev.Messages {
		if m.Role == memory.RoleTool || len(m.ToolCalls) > 0 {
			t.Errorf("event message %s %s has tool parts", m.ID, m.Role)
		}
	}
}
