package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
)

func create(t *testing.T, st *store.Store, sc memory.Scope, content, meta string, ttl time.Duration) memory.CreatedMemory {
	t.Helper()
	p := store.CreateMemoryParams{Scope: sc, Content: content, TTL: ttl}
	if meta != "" {
		p.Metadata = json.RawMessage(meta)
	}
	out, replayed, err := createMemory(st, context.Background(), p)
	if err != nil || replayed {
		t.Fatalf("create %q: replayed %v, %v", content, replayed, err)
	}
	return out
}

// A fact remembered without a turn merges exactly as a turn's facts do, through the same
// statement: a new fact takes a row of its own (merged false); the same text again, a
// paraphrase, or the same fact committed in a turn go into that memory (merged true, its id),
// which takes the newest text and vector, merged metadata and the later expiry; a different
// fact, or the same fact for another agent, does not merge; an expired memory of the same text
// starts afresh (merged false, a new id).
func TestCreateMemoryMergesAsATurnDoes(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t)
	vecs := mergeVectors()
	vecs[lisbon+"."] = near(1)
	st := e.open(&fixedEmbedder{model: mergeModel, vecs: vecs}, 0)
	sc := newScope()

	first := create(t, st, sc, lisbon, `{"kind":"place"}`, time.Hour)
	if first.Merged || first.ID == uuid.Nil {
		t.Fatalf("a new fact: %+v, want a new memory", first)
	}
	again := create(t, st, sc, lisbon+".", `{"source":"chat"}`, 48*time.Hour)
	if !again.Merged || again.ID != first.ID {
		t.Errorf("the same text again: %+v, want merged into %s", again, first.ID)
	}
	para := create(t, st, sc, lisbonHome, "", time.Hour)
	if !para.Merged || para.ID != first.ID {
		t.Errorf("a paraphrase: %+v, want merged into %s", para, first.ID)
	}
	rows := e.rows(sc)
	if len(rows) != 1 || rows[0].Content != lisbonHome || fmt.Sprint(rows[0].Metadata) != fmt.Sprint(map[string]any{"kind": "place", "source": "chat"}) ||
		time.Until(rows[0].ExpiresAt) < 47*time.Hour || rows[0].Embedding == nil || fmt.Sprint(rows[0].Embedding.Slice()) != fmt.Sprint(near(0.97)) {
		t.Fatalf("after merging: %+v", rows)
	}
	// A turn's fact merges into the memory made without a turn, and the reverse.
	if ids := e.commit(st, sc, time.Hour, fact{lisbonCity, ""}); ids[0] != first.ID {
		t.Errorf("a turn's paraphrase went to %s, want %s", ids[0], first.ID)
	}
	turnFact := e.commit(st, sc, time.Hour, fact{owes, ""})[0]
	if c := create(t, st, sc, owes, "", time.Hour); !c.Merged || c.ID != turnFact {
		t.Errorf("the fact of a turn remembered again: %+v, want merged into %s", c, turnFact)
	}
	if c := create(t, st, sc, owesBack, "", time.Hour); c.Merged || c.ID == turnFact {
		t.Errorf("the same words in another order: %+v, want a memory of its own", c)
	}
	if c := create(t, st, sc, cat, "", time.Hour); c.Merged {
		t.Errorf("a different fact: %+v, want a memory of its own", c)
	}
	other := sc
	other.Agent = "other-agent"
	if c := create(t, st, other, lisbon, "", time.Hour); c.Merged || c.ID == first.ID {
		t.Errorf("the same fact for another agent: %+v, want a memory of its own", c)
	}
	if n := len(e.rows(sc)); n != 4 {
		t.Errorf("%d memories of the scope, want 4", n)
	}

	// An expired memory of the same text starts afresh.
	old := create(t, st, sc, cat, "", time.Hour)
	if _, err := e.db.Exec(context.Background(), `update agentmem.memories set expires_at = now() - interval '1 second'
		where id = $1`, old.ID); err != nil {
		t.Fatal(err)
	}
	if fresh := create(t, st, sc, cat, "", time.Hour); fresh.Merged || fresh.ID == old.ID {
		t.Errorf("a fact whose memory expired: %+v, want a new memory (not %s)", fresh, old.ID)
	}
}

// With an Idempotency-Key a retry answers what the first request did (merged or not) and
// changes nothing; the key with another request is a conflict; keys belong to their caller
// and their function.
func TestCreateMemoryIdempotency(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t)
	st := e.open(nil, 0)
	sc := newScope()
	ctx := context.Background()
	key := func(k, hash string) *store.Idempotency {
		return &store.Idempotency{CallerRole: "authenticated", Function: "memories", Key: k, RequestHash: []byte(hash)}
	}
	p := store.CreateMemoryParams{Scope: sc, Content: lisbon, TTL: time.Hour, Idempotency: key("k1", "a")}
	first, replayed, err := createMemory(st, ctx, p)
	if err != nil || replayed || first.Merged {
		t.Fatalf("first: %+v replayed %v, %v", first, replayed, err)
	}
	before := e.rows(sc)
	again, replayed, err := createMemory(st, ctx, p)
	if err != nil || !replayed || again != first {
		t.Fatalf("retry: %+v replayed %v, %v; want %+v replayed", again, replayed, err, first)
	}
	if after := e.rows(sc); len(after) != 1 || !after[0].UpdatedAt.Equal(before[0].UpdatedAt) {
		t.Errorf("the retry changed the memory: %+v", after)
	}
	// A second request, merged, is replayed as merged.
	m := store.CreateMemoryParams{Scope: sc, Content: lisbonHome, TTL: time.Hour, Idempotency: key("k2", "b")}
	merged, _, err := createMemory(st, ctx, m)
	if err != nil || !merged.Merged {
		t.Fatalf("merging request: %+v, %v", merged, err)
	}
	if again, replayed, err := createMemory(st, ctx, m); err != nil || !replayed || again != merged {
		t.Errorf("retry of the merging request: %+v replayed %v, %v", again, replayed, err)
	}
	// Same key, another request: a conflict, nothing stored.
	_, _, err = createMemory(st, ctx, store.CreateMemoryParams{Scope: sc, Content: cat, TTL: time.Hour, Idempotency: key("k1", "other")})
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("same key, other request: %v, want a conflict", err)
	}
	if n := len(e.rows(sc)); n != 1 {
		t.Errorf("%d memories after the conflict, want 1", n)
	}
	// Another caller role (a service acting for the user), or commit-turn, with the same key:
	// a new request.
	svc := key("k1", "other")
	svc.CallerRole = "service_role"
	if out, replayed, err := createMemory(st, ctx, store.CreateMemoryParams{Scope: sc, Content: cat, TTL: time.Hour, Idempotency: svc}); err != nil || replayed || out.Merged {
		t.Errorf("the service's own key: %+v replayed %v, %v", out, replayed, err)
	}
	if _, replayed, err := commitTurn(st, ctx, store.CommitParams{Scope: sc, SessionID: uuid.New(), TTL: time.Hour,
		Messages:    []memory.NewMessage{{Role: memory.RoleUser, Content: cat}},
		Idempotency: &store.Idempotency{CallerRole: "authenticated", Function: "commit-turn", Key: "k1", RequestHash: []byte("x")}}); err != nil || replayed {
		t.Errorf("commit-turn with the key of memories: replayed %v, %v", replayed, err)
	}
	// Concurrent identical requests store one memory and give one answer.
	c := store.CreateMemoryParams{Scope: sc, Content: owes, TTL: time.Hour, Idempotency: key("k3", "c")}
	outs := make(chan memory.CreatedMemory, 8)
	for range 8 {
		go func() {
			out, _, err := createMemory(st, ctx, c)
			if err != nil {
				t.Error(err)
			}
			outs <- out
		}()
	}
	var firstOut memory.CreatedMemory
	for i := range 8 {
		out := <-outs
		if i == 0 {
			firstOut = out
		} else if out != firstOut {
			t.Errorf("racing requests answered %+v and %+v", firstOut, out)
		}
	}
}

// When the embedding provider is down the fact is stored without a vector (merging only into
// the same text) and embed-pending embeds it later.
func TestCreateMemoryOutlivesAnEmbeddingOutage(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t)
	emb := &fixedEmbedder{model: mergeModel, vecs: mergeVectors()}
	st := e.open(emb, 0)
	sc := newScope()
	emb.down.Store(true)
	out := create(t, st, sc, lisbon, "", time.Hour)
	rows := e.rows(sc)
	if out.Merged || len(rows) != 1 || rows[0].Embedding != nil {
		t.Fatalf("stored during the outage: %+v, rows %+v", out, rows)
	}
	emb.down.Store(false)
	if _, err := embedPending(st, context.Background(), 100); err != nil {
		t.Fatal(err)
	}
	if rows := e.rows(sc); rows[0].Embedding == nil || rows[0].Model == nil || *rows[0].Model != mergeModel {
		t.Errorf("after embed-pending: %+v", rows[0])
	}
}

// A fact drawn from a turn (Source) is stored only while every message of the turn is: after
// the turn is deleted, or its user erased, CreateMemory answers ErrSourceGone and stores
// nothing.
func TestCreateMemoryFromAGoneTurn(t *testing.T) {
	t.Parallel()
	st, _, exec := commitEnv(t)
	ctx := context.Background()
	sc := newScope()
	sid := uuid.New()
	p := turn(sc, sid)
	p.Messages = append(p.Messages, memory.NewMessage{Role: memory.RoleAssistant, Content: "ok"})
	res, _, err := commitTurn(st, ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	src := &store.MessageRange{SessionID: sid, SeqFrom: res.Messages[0].Seq, SeqTo: res.Messages[1].Seq}
	fact := func(content string) error {
		_, _, err := createMemory(st, ctx, store.CreateMemoryParams{Scope: sc, Content: content, TTL: time.Hour, Source: src})
		return err
	}
	if err := fact("The user likes tea."); err != nil {
		t.Fatalf("while the turn is stored: %v", err)
	}
	// Another user cannot lean on the turn: row-level security hides it.
	other := newScope()
	if _, _, err := createMemory(st, ctx, store.CreateMemoryParams{Scope: other, Content: "x", TTL: time.Hour, Source: src}); !errors.Is(err, store.ErrSourceGone) {
		t.Errorf("another user's fact from this turn: %v, want ErrSourceGone", err)
	}
	exec(`delete from agentmem.messages where session_id = $1 and seq = $2`, sid, res.Messages[1].Seq)
	if err := fact("The user likes coffee."); !errors.Is(err, store.ErrSourceGone) {
		t.Fatalf("after a message of the turn went: %v, want ErrSourceGone", err)
	}
	page, err := st.ListMemories(ctx, store.ListMemoriesParams{Scope: sc, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Items[0].Content != "The user likes tea." {
		t.Errorf("memories stored: %+v, want only the one drawn while the turn was whole", page.Items)
	}
}

// An update based on a read of the memory older than its last change (IfUpdatedAt) is a
// conflict (ErrMemoryChanged) and changes nothing; based on its current state, it goes through.
func TestUpdateMemoryIfUnchanged(t *testing.T) {
	t.Parallel()
	e := storetest.New(t)
	ctx := context.Background()
	sc := storetest.Scope(memory.DefaultAgent)
	id := storetest.Memory(t, e.Store, sc, "User prefers tea.", nil).ID
	cur, err := e.Store.GetMemory(ctx, sc, id)
	if err != nil {
		t.Fatal(err)
	}
	next := "User prefers coffee."
	stale := cur.UpdatedAt.Add(-time.Microsecond)
	_, err = e.Store.UpdateMemory(ctx, store.UpdateMemoryParams{Scope: sc, ID: id, Content: &next, IfUpdatedAt: &stale})
	if !errors.Is(err, store.ErrConflict) || !errors.Is(err, store.ErrMemoryChanged) {
		t.Fatalf("update on a stale read: %v, want a conflict", err)
	}
	if got, err := e.Store.GetMemory(ctx, sc, id); err != nil || got.Content != cur.Content || !got.UpdatedAt.Equal(cur.UpdatedAt) {
		t.Fatalf("after the refused update: %+v, %v", got, err)
	}
	got, err := e.Store.UpdateMemory(ctx, store.UpdateMemoryParams{Scope: sc, ID: id, Content: &next, IfUpdatedAt: &cur.UpdatedAt})
	if err != nil || got.Content != next {
		t.Fatalf("update on the current read: %q, %v", got.Content, err)
	}
}

// A merge keeps the better-formed text: the same fact in worse form ("user lives in lisbon!",
// in capitals, a rephrasing in lower case) leaves the memory's text and says so
// (content_changed false); the same fact better formed, or a rephrasing as well formed, gives
// its text and says so; of two as well formed, the first stays. A turn's facts follow the same
// rule.
func TestAMergeKeepsTheBetterFormedText(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t)
	const (
		lisbonDot     = "User lives in Lisbon."
		lisbonLower   = "user lives in lisbon!"
		lisbonCaps    = "USER LIVES IN LISBON."
		lisbonNowLow  = "user lives in lisbon now"
		teaLower      = "user likes tea"
		teaDot        = "User likes tea."
		teaBang       = "User likes tea!"
		lisbonNowBang = "User lives in Lisbon now!"
	)
	vecs := mergeVectors()
	for _, s := range []string{lisbonDot, lisbonLower, lisbonCaps} {
		vecs[s] = near(1)
	}
	vecs[lisbonNowLow], vecs[lisbonNowBang] = near(0.97), near(0.97)
	for _, s := range []string{teaLower, teaDot, teaBang} {
		vecs[s] = []float32{0, 0, 1, 0}
	}
	st := e.open(&fixedEmbedder{model: mergeModel, vecs: vecs}, 0)
	sc := newScope()
	content := func(id uuid.UUID) string {
		t.Helper()
		for _, r := range e.rows(sc) {
			if r.ID == id {
				return r.Content
			}
		}
		t.Fatalf("no memory %s", id)
		return ""
	}
	check := func(label string, got memory.CreatedMemory, id uuid.UUID, changed bool, want string) {
		t.Helper()
		if !got.Merged || got.ID != id || got.ContentChanged != changed {
			t.Errorf("%s: %+v, want merged into %s with content_changed %v", label, got, id, changed)
		}
		if c := content(id); c != want {
			t.Errorf("%s: the memory reads %q, want %q", label, c, want)
		}
	}

	first := create(t, st, sc, lisbonDot, "", time.Hour)
	if first.Merged || first.ContentChanged {
		t.Fatalf("a new fact: %+v", first)
	}
	check("the same fact in lower case", create(t, st, sc, lisbonLower, "", time.Hour), first.ID, false, lisbonDot)
	check("the same fact in capitals", create(t, st, sc, lisbonCaps, "", time.Hour), first.ID, false, lisbonDot)
	check("a rephrasing in lower case", create(t, st, sc, lisbonNowLow, "", time.Hour), first.ID, false, lisbonDot)
	if ids := e.commit(st, sc, time.Hour, fact{lisbonLower, ""}); ids[0] != first.ID || content(first.ID) != lisbonDot {
		t.Errorf("a turn's fact in lower case: memory %s reads %q", ids[0], content(first.ID))
	}
	check("a rephrasing as well formed", create(t, st, sc, lisbonNowBang, "", time.Hour), first.ID, true, lisbonNowBang)

	tea := create(t, st, sc, teaLower, "", time.Hour)
	check("the same fact better formed", create(t, st, sc, teaDot, "", time.Hour), tea.ID, true, teaDot)
	check("the same fact as well formed", create(t, st, sc, teaBang, "", time.Hour), tea.ID, false, teaDot)
	check("the memory's own text again", create(t, st, sc, teaDot, "", time.Hour), tea.ID, false, teaDot)
	if n := len(e.rows(sc)); n != 2 {
		t.Errorf("%d memories, want 2", n)
	}
}
