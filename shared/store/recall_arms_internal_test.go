package store

import (
	"testing"
	"time"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/testdb"
)

// ListsAtOnceAuto asks a scope's lists at once only after one of its recalls in one statement
// was slow, stops after a recall at once that did not pay, and tells scopes apart; Always and
// Never do as they say; a recall of one list, or a pool without a connection for each list,
// always takes one statement.
func TestListsAtOnceLearnsWhichScopesAreSlow(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	open := func(maxConns int32, mode ListsAtOnce) *Store {
		st, err := Open(t.Context(), Config{DatabaseURL: db.URL, MaxConns: maxConns, ListsAtOnce: mode})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		return st
	}
	vec := "[1,0,0]"
	hybrid := func(user, source string) RecallParams {
		return RecallParams{Scope: memory.Scope{UserID: user}, Source: source, Mode: memory.ModeHybrid, QueryVector: &vec}
	}
	auto := open(4, ListsAtOnceAuto)
	slow, other := hybrid("slow", memory.SourceMessages), hybrid("other", memory.SourceMessages)
	if auto.fansOut(slow) {
		t.Fatal("a scope not yet seen is asked at once")
	}
	auto.noteOneStatement(slow, ListsAtOnceAfter-time.Microsecond)
	if auto.fansOut(slow) {
		t.Error("a fast recall in one statement made the next ones at once")
	}
	auto.noteOneStatement(slow, ListsAtOnceAfter)
	if !auto.fansOut(slow) {
		t.Error("a slow recall in one statement did not make the next ones at once")
	}
	if auto.fansOut(other) || auto.fansOut(hybrid("slow", memory.SourceMemories)) {
		t.Error("another user's or source's recalls are asked at once")
	}
	text := slow
	text.Mode = memory.ModeText // one list
	auto.noteOneStatement(text, time.Second)
	if auto.fansOut(text) {
		t.Error("a recall of one list is asked at once")
	}
	// a recall at once that did not pay
	auto.slowScopes.set(scopeKey(slow), false)
	if auto.fansOut(slow) {
		t.Error("a scope whose recall at once did not pay is still asked at once")
	}
	// what was learned is forgotten after scopeMemoTTL
	auto.slowScopes.set(scopeKey(slow), true)
	auto.slowScopes.m[scopeKey(slow)] = scopeNote{slow: true, until: time.Now().Add(-time.Second)}
	if auto.fansOut(slow) {
		t.Error("a scope learned long ago is still asked at once")
	}

	if !open(4, ListsAtOnceAlways).fansOut(other) {
		t.Error("Always did not ask at once")
	}
	never := open(4, ListsAtOnceNever)
	never.noteOneStatement(slow, time.Second)
	if never.fansOut(slow) {
		t.Error("Never asked at once")
	}
	// four lists from a pool of two: one statement
	all := hybrid("other", memory.SourceAll)
	if open(2, ListsAtOnceAlways).fansOut(all) || !open(4, ListsAtOnceAlways).fansOut(all) {
		t.Error("the pool's size does not bound the lists asked at once")
	}
	if open(1, ListsAtOnceAlways).fansOut(other) {
		t.Error("a pool of one asked at once")
	}

	// Recall learns from its own time: a recall in one statement at least listsAtOnceAfter
	// long makes the next ones at once; one at once whose lists were faster together makes them
	// one statement again (and only the path at once can unlearn it)
	learner := open(4, ListsAtOnceAuto)
	p := RecallParams{Scope: memory.Scope{UserID: "learner"}, Source: memory.SourceMessages, Query: "harbour", K: 5,
		Mode: memory.ModeHybrid, QueryVector: &vec, Model: "m"}
	recall := func() {
		t.Helper()
		if _, err := learner.Recall(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	learner.listsAtOnceAfter = 0
	recall()
	if !learner.slowScopes.get(scopeKey(p)) {
		t.Error("a slow recall in one statement taught nothing")
	}
	learner.listsAtOnceAfter = time.Hour
	recall()
	if learner.slowScopes.get(scopeKey(p)) {
		t.Error("a recall at once whose lists were fast did not make the next ones one statement")
	}

	// a full memo forgets the expired scopes first
	var m scopeMemo
	m.set("kept", true)
	for i := range scopeMemoMax - 1 {
		m.m[string(rune(i))+"old"] = scopeNote{slow: true, until: time.Now().Add(-time.Minute)}
	}
	m.set("new", true)
	if !m.get("kept") || !m.get("new") || len(m.m) != 2 {
		t.Errorf("a full memo of expired scopes kept %d of them, the live one %v", len(m.m), m.get("kept"))
	}
}
