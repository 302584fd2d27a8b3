package store_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"pgregory.net/rapid"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// liveMessage is a message the model of the property below holds.
type liveMessage struct {
	id     uuid.UUID
	seq    int64
	tokens int
}

// get-context never has a gap, whatever the interleaving of commits, summaries (saved, or
// refused as stale), deletions of messages and reads with any budget: the summary it answers
// is the one saved last (none after a deletion of a message it covers), and its messages are
// the newest messages after the summary's through_seq, every one of them unless max_messages
// or max_tokens stops the window first.
func TestGetContextNeverHasAGap(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: property test over many random histories")
	}
	db := testdb.New(t)
	st := obOpen(t, db)
	ctx := t.Context()
	rapid.Check(t, func(rt *rapid.T) {
		sc := memory.Scope{UserID: uuid.NewString(), Agent: "a"}
		sid := uuid.New()
		var live []liveMessage
		var through int64 // the summary's through_seq, 0 when none
		committed := false
		commit := func() {
			n := rapid.IntRange(1, 4).Draw(rt, "turn")
			p := store.CommitParams{Scope: sc, SessionID: sid, TTL: time.Hour}
			for i := range n {
				role := []string{memory.RoleUser, memory.RoleAssistant}[i%2]
				content := strings.Repeat("w", rapid.IntRange(1, 160).Draw(rt, "len"))
				p.Messages = append(p.Messages, memory.NewMessage{Role: role, Content: content})
			}
			res, _, err := st.CommitTurn(ctx, p)
			if err != nil {
				rt.Fatalf("commit: %v", err)
			}
			committed = true
			for i, m := range res.Messages {
				live = append(live, liveMessage{uuid.MustParse(m.ID), m.Seq, memory.EstimateTokens(p.Messages[i].Content, nil, nil, nil)})
			}
		}
		summarize := func() {
			in, err := st.SummaryInput(ctx, sc, sid)
			if err == nil && !in.Found && !committed {
				return // no session yet
			}
			if err != nil || !in.Found {
				rt.Fatalf("summary input: %+v, %v", in, err)
			}
			var prev int64
			if in.Summary != nil {
				prev = in.Summary.ThroughSeq
			}
			if prev != through {
				rt.Fatalf("summary input through %d, want %d", prev, through)
			}
			trigger := rapid.IntRange(1, 300).Draw(rt, "trigger")
			policy := memory.SummaryPolicy{TriggerTokens: trigger, KeepTokens: rapid.IntRange(0, trigger-1).Draw(rt, "keep"),
				MaxInputTokens: rapid.IntRange(0, 400).Draw(rt, "max input")}
			plan, ok := memory.PlanSummary(in.Messages, prev, policy)
			if !ok {
				return
			}
			stale := rapid.IntRange(0, 4).Draw(rt, "stale") == 0 && prev > 0
			p := store.SaveSummaryParams{Scope: sc, SessionID: sid, PreviousThroughSeq: prev, FromSeq: plan.FromSeq,
				ThroughSeq: plan.ThroughSeq, Messages: plan.Messages, Content: fmt.Sprintf("through %d", plan.ThroughSeq),
				Prompt: "summarise.v1", Model: "test"}
			if stale {
				p.PreviousThroughSeq = prev - 1 // made from a summary that is no longer the session's
			}
			_, err = st.SaveSummary(ctx, p)
			switch {
			case stale && !errors.Is(err, store.ErrSummaryStale):
				rt.Fatalf("a stale summary was saved: %v", err)
			case stale:
			case err != nil:
				rt.Fatalf("save summary: %v", err)
			default:
				through = plan.ThroughSeq
			}
		}
		deleteOne := func() {
			if len(live) == 0 {
				return
			}
			i := rapid.IntRange(0, len(live)-1).Draw(rt, "delete")
			if err := st.DeleteMessage(ctx, sc, &sid, live[i].id.String()); err != nil {
				rt.Fatalf("delete message: %v", err)
			}
			if live[i].seq <= through {
				through = 0
			}
			live = append(live[:i], live[i+1:]...)
		}
		check := func() {
			maxMessages := rapid.IntRange(1, 30).Draw(rt, "max messages")
			maxTokens := rapid.SampledFrom([]int{0, rapid.IntRange(1, 400).Draw(rt, "max tokens")}).Draw(rt, "budget")
			got, err := st.GetContext(ctx, store.ContextParams{Scope: sc, SessionID: sid, MaxMessages: maxMessages, MaxTokens: maxTokens})
			if err != nil {
				rt.Fatalf("get-context: %v", err)
			}
			switch {
			case through == 0 && got.Summary != nil:
				rt.Fatalf("a summary (through %d) where none should be", got.Summary.ThroughSeq)
			case through > 0 && (got.Summary == nil || got.Summary.ThroughSeq != through):
				rt.Fatalf("summary %+v, want through %d", got.Summary, through)
			}
			var after []liveMessage
			for _, m := range live {
				if m.seq > through {
					after = append(after, m)
				}
			}
			k := len(got.Messages)
			if k > len(after) {
				rt.Fatalf("%d messages, only %d after the summary", k, len(after))
			}
			tokens := 0
			for i, m := range got.Messages {
				want := after[len(after)-k+i]
				if m.Seq != want.seq {
					rt.Fatalf("message %d has seq %d, want %d (a gap or an overlap with the summary)", i, m.Seq, want.seq)
				}
				tokens += want.tokens
			}
			if k < len(after) {
				next := after[len(after)-k-1]
				if k != maxMessages && !(maxTokens > 0 && tokens+next.tokens > maxTokens) {
					rt.Fatalf("%d of %d messages after the summary, with room for seq %d (max_messages %d, max_tokens %d, %d used)",
						k, len(after), next.seq, maxMessages, maxTokens, tokens)
				}
			}
		}
		for range rapid.IntRange(1, 25).Draw(rt, "steps") {
			switch rapid.IntRange(0, 9).Draw(rt, "action") {
			case 0, 1, 2, 3:
				commit()
			case 4, 5, 6:
				summarize()
			case 7:
				deleteOne()
			default:
				check()
			}
		}
		check()
	})
}

// A saved summary tells the adapters (onSummaryUpdated, with its through_seq), in its own
// transaction; a reset deletes it, and a summary made before the reset is refused.
func TestSummaryTellsAdaptersAndGoesWithReset(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	st := obOpen(t, db, adapter.Webhook)
	ctx := t.Context()
	sc := storetest.Scope("a")
	sid := uuid.New()
	res := storetest.Commit(t, st, sc, sid, []memory.NewMessage{
		{Role: memory.RoleUser, Content: "one"}, {Role: memory.RoleAssistant, Content: "two"}, {Role: memory.RoleUser, Content: "three"}})
	save := func(prev int64) error {
		_, err := st.SaveSummary(ctx, store.SaveSummaryParams{Scope: sc, SessionID: sid, PreviousThroughSeq: prev, FromSeq: 1,
			ThroughSeq: res.Messages[1].Seq, Messages: 2, Content: "one, two", Prompt: "summarise.v1", Model: "m"})
		return err
	}
	if err := save(0); err != nil {
		t.Fatal(err)
	}
	if err := save(0); !errors.Is(err, store.ErrSummaryStale) {
		t.Errorf("a second first summary: %v, want stale", err)
	}
	conn, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var found bool
	for _, j := range obJobs(t, conn, sc.UserID) {
		if j.Intent == adapter.SummaryUpdated {
			found = true
			if j.Adapter != adapter.Webhook || j.SessionID == nil || *j.SessionID != sid || j.Refs["seq_to"] != float64(res.Messages[1].Seq) {
				t.Errorf("summary job: %+v", j)
			}
			claimed := store.ClaimedJob{Job: memory.Job{ID: j.ID, Intent: j.Intent, SessionID: j.SessionID, UserID: j.UserID},
				EventID: j.EventID, Agent: j.Agent, Refs: []byte(`{"seq_to": 2}`)}
			evs, err := st.LoadEvents(ctx, claimed)
			if err != nil || len(evs) != 1 || evs[0].Type != adapter.SummaryUpdated || evs[0].SeqTo == nil || *evs[0].SeqTo != 2 {
				t.Errorf("summary event: %+v, %v", evs, err)
			}
		}
	}
	if !found {
		t.Error("no onSummaryUpdated job")
	}
	if _, err := st.ResetSession(ctx, sc, sid); err != nil {
		t.Fatal(err)
	}
	got, err := st.GetContext(ctx, store.ContextParams{Scope: sc, SessionID: sid, MaxMessages: 10})
	if err != nil || got.Summary != nil {
		t.Errorf("after a reset: summary %+v, %v", got.Summary, err)
	}
	if err := save(0); !errors.Is(err, store.ErrSummaryStale) {
		t.Errorf("a summary of reset messages: %v, want stale", err)
	}
}
