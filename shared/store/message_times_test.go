package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// A message given its time (an imported history) is stored and answered with that time, on
// both ways a turn is written: in one round trip, and in a transaction (an idempotency key)
// whose retry answers the same times. A message without one gets the commit's time. Seq still
// follows the order given, not the times; expiry and the session's activity count from the
// commit; history's since reads the stored times.
func TestCommitTurnStoresGivenMessageTimes(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	st := openWith(t, db.URL, nil)
	admin := storetest.Admin(t, db.URL)
	ctx := context.Background()
	said := time.Date(2023, 3, 4, 5, 6, 7, 123456000, time.UTC)
	// A later message may carry an earlier time, in another zone.
	earlier := time.Date(2022, 12, 31, 23, 0, 0, 0, time.FixedZone("+02:00", 2*3600))

	for _, keyed := range []bool{false, true} {
		name := "one round trip"
		if keyed {
			name = "with a key"
		}
		t.Run(name, func(t *testing.T) {
			sc := storetest.Scope(memory.DefaultAgent)
			sid := uuid.New()
			p := store.CommitParams{Scope: sc, SessionID: sid, TTL: time.Hour, Messages: []memory.NewMessage{
				{Role: memory.RoleUser, Content: "what did I do last week?", CreatedAt: &said},
				{Role: memory.RoleAssistant, Content: "you went climbing"},
				{Role: memory.RoleUser, Content: "and before that?", CreatedAt: &earlier},
			}}
			if keyed {
				p.Idempotency = &store.Idempotency{CallerRole: "service_role", Function: "commit-turn", Key: "import-1", RequestHash: []byte("h")}
			}
			before := time.Now().Add(-time.Minute)
			res, replayed, err := commitTurn(st, ctx, p)
			if err != nil || replayed {
				t.Fatalf("commit: replayed %v, %v", replayed, err)
			}
			after := time.Now().Add(time.Minute)
			if got := res.Messages[0].CreatedAt; !got.Equal(said) || got.Location() != time.UTC {
				t.Errorf("answered created_at %v, want %v in UTC", got, said)
			}
			if got := res.Messages[2].CreatedAt; !got.Equal(earlier) || got.Location() != time.UTC {
				t.Errorf("answered created_at %v, want %v in UTC", got, earlier.UTC())
			}
			if got := res.Messages[1].CreatedAt; got.Before(before) || got.After(after) {
				t.Errorf("a message without a time was created at %v, want about now", got)
			}
			if !(res.Messages[0].Seq < res.Messages[1].Seq && res.Messages[1].Seq < res.Messages[2].Seq) {
				t.Errorf("seqs %d, %d, %d do not follow the order given", res.Messages[0].Seq, res.Messages[1].Seq, res.Messages[2].Seq)
			}

			for i, m := range res.Messages {
				var stored time.Time
				var expiresFromCommit bool
				if err := admin.QueryRow(ctx, `select created_at,
					  abs(extract(epoch from expires_at - (now() + interval '1 hour'))) < 60
					from agentmem.messages where id = $1`, m.ID).Scan(&stored, &expiresFromCommit); err != nil {
					t.Fatal(err)
				}
				if !stored.Equal(m.CreatedAt) {
					t.Errorf("messages[%d] stored at %v, answered %v", i, stored, m.CreatedAt)
				}
				if !expiresFromCommit {
					t.Errorf("messages[%d] does not expire an hour after the commit", i)
				}
			}
			var activeNow bool
			if err := admin.QueryRow(ctx, `select last_active_at > now() - interval '1 minute'
				from agentmem.sessions where id = $1`, sid).Scan(&activeNow); err != nil {
				t.Fatal(err)
			}
			if !activeNow {
				t.Error("the session's last_active_at is not the commit's time")
			}

			if keyed {
				again, replayed, err := commitTurn(st, ctx, p)
				if err != nil || !replayed {
					t.Fatalf("retry: replayed %v, %v", replayed, err)
				}
				for i := range res.Messages {
					if !again.Messages[i].CreatedAt.Equal(res.Messages[i].CreatedAt) || again.Messages[i].ID != res.Messages[i].ID {
						t.Errorf("retry answered messages[%d] %+v, first %+v", i, again.Messages[i], res.Messages[i])
					}
				}
			}

			// since reads the stored times: the message said before it is left out, in the
			// session's history and in the user's.
			since := said.Add(-time.Second)
			page, err := st.SessionHistory(ctx, store.HistoryParams{Scope: sc, SessionID: sid, Limit: 10, Since: &since})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Messages) != 2 || page.Total != 2 || page.Messages[0].ID != res.Messages[0].ID ||
				!page.Messages[0].CreatedAt.Equal(said) || page.Messages[1].ID != res.Messages[1].ID {
				t.Errorf("session history since %v: %+v (total %d)", since, page.Messages, page.Total)
			}
			upage, err := st.UserHistory(ctx, store.UserHistoryParams{Scope: sc, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			// Across sessions the history is in time order: the earlier message first.
			if len(upage.Messages) != 3 || upage.Messages[0].ID != res.Messages[2].ID || upage.Messages[1].ID != res.Messages[0].ID {
				t.Errorf("user history: %+v", upage.Messages)
			}
		})
	}
}
