package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/adapter/redis"
	"github.com/agentmem/agentmem/shared/adapter/redis/redistest"
	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/redact"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// crossUserFlows are the flows whose statements may read every user's partitions, each for
// its reason: they are not one user's request.
var crossUserFlows = map[string]string{
	"sweep":         "the sweep deletes every user's expired rows",
	"process-jobs":  "delivery claims the due jobs of every user, oldest first",
	"jobs":          "the jobs function lists, reads, retries and purges the outbox of every user (service callers)",
	"embed-pending": "the embed-pending run embeds the rows of every user stored without a vector",
	"self-check":    "the sweep's dry run, to see the check catch a statement that reads every user's rows",
}

// crossUserStatements are statements of one user's flow that may read every partition, by a
// fragment of their text, each for its reason.
var crossUserStatements = map[string]string{
	// agentmem.keep_session_id_unique, when a session is created
	"from agentmem.sessions s where s.id = new.id and s.user_id <> new.user_id": "a new session's id is looked for among every user's sessions, so that another user's session answers 404 as on one table (one probe of each partition's id index, only when a session is created)",
}

// Every statement of one user's request reads one partition of each user-owned table, on a
// database partitioned by user into 4: the use cases run with auto_explain logging each
// statement's executed plan (the statements functions and triggers run included), and a
// statement that read two partitions of a table fails the test, unless its flow or the
// statement itself is one of the cross-user ones above, or it read the user's memories and the
// tenant's shared memories: those are two partitions of agentmem.memories at most, the user's
// and that of memory.SharedUserID (the user is chosen to hash elsewhere, so that both are seen
// read, and a recall without the shared memories is seen to read the user's alone). The flows
// run three times: with the server's choice of plans (custom plans for a statement's first
// runs); with generic plans forced, where the user is known only when the executor starts; and
// so again with row-level security off, where the statement's own condition on the user is all
// that prunes, as a distributed Postgres needs to send it to one shard.
func TestStatementsReadOnePartition(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: explains every flow's statements three times on partitioned databases")
	}
	withPolicies := testdb.NewPartitioned(t, 4)
	withoutPolicies := testdb.NewPartitioned(t, 4)
	storetest.Exec(t, withoutPolicies.URL, `do $$
		declare t regclass;
		begin
		  for t in select rel from agentmem.user_owned_tables() loop
		    execute format('alter table %s disable row level security', t);
		  end loop;
		end $$`)
	generic := map[string]string{"plan_cache_mode": "force_generic_plan"}
	for _, pass := range []struct {
		name     string
		db       testdb.DB
		settings map[string]string
	}{{"chosen plans", withPolicies, nil}, {"generic plans", withPolicies, generic},
		{"generic plans without policies", withoutPolicies, generic}} {
		t.Run(pass.name, func(t *testing.T) {
			db := pass.db
			plans := storetest.NewPlans(t, db.URL, pass.settings)
			// recall's lists asked at once, so that their statements' plans are checked too
			e := &storetest.Env{DB: db, Store: storetest.Open(t, db, storetest.MaxConns(4),
				storetest.Adapters(adapter.Redis), storetest.Watch(plans),
				storetest.Config(func(c *store.Config) { c.ListsAtOnce = store.ListsAtOnceAlways }))}
			srv := redistest.Start(t, redistest.Options{})
			cache, err := redis.New(redis.Config{URL: srv.URL(), Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cache.Close() })
			red, err := redact.New("a-salt-of-more-than-sixteen-bytes")
			if err != nil {
				t.Fatal(err)
			}
			a := app.New(e.Store, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Config{
				Adapters: map[string]adapter.Adapter{adapter.Redis: cache}, Redactor: red,
				RateLimit:   app.RateLimit{User: 1000, Tenant: 1000},
				History:     memory.HistoryCap{Keep: memory.MinHistoryKeep},
				CacheSettle: time.Millisecond,
				Jobs:        app.JobsConfig{BackoffBase: time.Millisecond, BackoffMax: time.Millisecond}})

			shared := partitionOf(t, db.URL, "memories", memory.SharedUserID)
			runFlows(t, a, plans, func(user string) bool { return partitionOf(t, db.URL, "memories", user) != shared })
			checkPlans(t, plans.Taken(), shared)
		})
	}
}

// partitionOf is the partition of agentmem.<table> that holds the rows of user.
func partitionOf(t *testing.T, url, table, user string) string {
	t.Helper()
	var part string
	if err := storetest.Admin(t, url).QueryRow(context.Background(), `
		select c.relname::text from pg_inherits i
		join pg_class c on c.oid = i.inhrelid,
		  regexp_match(pg_get_expr(c.relpartbound, c.oid), 'modulus (\d+), remainder (\d+)') b
		where i.inhparent = format('agentmem.%I', $1::text)::regclass
		  and satisfies_hash_partition(i.inhparent, b[1]::int, b[2]::int, $2::text)`,
		table, user).Scan(&part); err != nil {
		t.Fatalf("partition of %s for user %q: %v", table, user, err)
	}
	return part
}

// checkPlans fails for every plan of a user's flow that read more than one partition of a
// table, but for the user's memories beside the tenant's shared ones (partition shared of
// agentmem.memories), and checks that the flows read every user-owned table, that the user's
// and the shared memories were read together and a recall without the shared ones left them
// alone, and that the check catches a statement without its user.
func checkPlans(t *testing.T, plans []storetest.Plan, shared string) {
	t.Helper()
	read := map[string]bool{}
	used := map[string]bool{}
	caught, withShared := false, false
	for _, pl := range plans {
		if strings.HasSuffix(pl.Flow, " recall without shared") && slices.Contains(pl.Partitions["memories"], shared) {
			t.Errorf("flow %q: a statement read the shared memories' partition %s:\n%s", pl.Flow, shared, pl.Query)
		}
		var fanned []string
		for _, f := range pl.FannedOut() {
			if parts := pl.Partitions["memories"]; strings.HasPrefix(f, "memories: ") && len(parts) == 2 &&
				slices.Contains(parts, shared) {
				withShared = true // the user's partition and the shared memories'
				continue
			}
			fanned = append(fanned, f)
		}
		for parent := range pl.Partitions {
			read[parent] = true
		}
		if len(fanned) == 0 {
			continue
		}
		if pl.Flow == "self-check" {
			caught = true
		}
		if _, ok := crossUserFlows[pl.Flow]; ok {
			used[pl.Flow] = true
			continue
		}
		allowed := false
		for fragment := range crossUserStatements {
			if strings.Contains(pl.Query, fragment) {
				allowed, used[fragment] = true, true
			}
		}
		if !allowed {
			q := pl.Query
			if len(q) > 400 {
				q = q[:400] + "..."
			}
			t.Errorf("flow %q: a statement read %s:\n%s", pl.Flow, strings.Join(fanned, "; "), q)
		}
	}
	for fragment := range crossUserStatements {
		if !used[fragment] {
			t.Errorf("no statement of a user's flow read several partitions as %q: drop it from crossUserStatements", fragment)
		}
	}
	for flow := range crossUserFlows {
		if !used[flow] {
			t.Errorf("no statement of flow %q read several partitions: drop it from crossUserFlows", flow)
		}
	}
	if !caught {
		t.Error("the statement without its user was not seen reading every partition: the check checks nothing")
	}
	if !withShared {
		t.Errorf("no statement read a user's memories and the shared memories (%s) together: the exception for them checks nothing", shared)
	}
	for _, tb := range []string{"sessions", "messages", "memories", "active_sessions", "user_memory", "user_state",
		"notes", "idempotency_keys", "jobs", "message_words", "message_words_pending", "request_rates", "cache_generations",
		"session_summaries", "messages_archive"} {
		if !read[tb] {
			t.Errorf("no flow read agentmem.%s: the check saw none of its statements", tb)
		}
	}
}

// runFlows runs every use case of a user, as that user and as a service acting for them, then
// the cross-user ones; plans gets each flow's name. The user is one for whom apart says true.
func runFlows(t *testing.T, a *app.App, plans *storetest.Plans, apart func(user string) bool) {
	t.Helper()
	ctx := context.Background()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	str := func(s string) *string { return &s }
	msg := func(role, text string) app.MessageInput {
		return app.MessageInput{Role: &role, Content: json.RawMessage(fmt.Sprintf("%q", text))}
	}
	// Other users' rows in every partition, so that a statement reading the wrong ones reads
	// rows, not empty tables.
	for i := range 12 {
		other := auth.Principal{Role: auth.RoleUser, UserID: fmt.Sprintf("other-%d", i)}
		_, err := a.CommitTurn(ctx, other, app.CommitTurnInput{SessionID: str(uuid.NewString()),
			Messages: []app.MessageInput{msg("user", "I keep bees in Lyon"), msg("assistant", "Bees like lavender")},
			Memories: []app.MemoryInput{{Content: str("Keeps bees")}}})
		must("another user's turn", err)
	}
	_, err := a.KnowledgeIngest(ctx, auth.Principal{Role: auth.RoleService}, app.KnowledgeIngestInput{Op: "ingest",
		TenantID: str("t1"), Source: str("returns.md"), Content: str("Refunds are paid within five days.")})
	must("knowledge ingest", err)
	service := auth.Principal{Role: auth.RoleService}
	yes, no := true, false
	// Shared memories of the user's tenant, of another, and of no tenant, written and read by a
	// service caller: all in the partition of user ''.
	plans.Flow("service shared memories")
	for _, tenant := range []string{"t1", "t2", ""} {
		of := app.ActingFor{TenantID: str(tenant)}
		for _, content := range []string{"The office is closed on Fridays", "Prices are in metric units", "Ask before refunds"} {
			_, err = a.CreateMemory(ctx, service, app.CreateMemoryInput{ActingFor: of, Shared: &yes, Content: str(content)})
			must("shared memories create", err)
		}
		sharedList, err := a.ListMemories(ctx, service, app.ListMemoriesInput{ActingFor: of, Shared: &yes})
		must("shared memories list", err)
		if len(sharedList.Items) == 0 {
			t.Fatalf("tenant %q lists no shared memory", tenant)
		}
		sid := sharedList.Items[0].ID.String()
		_, err = a.GetMemory(ctx, service, app.OneMemoryInput{ActingFor: of, Shared: &yes, ID: &sid})
		must("shared memories get", err)
		_, err = a.UpdateMemory(ctx, service, app.UpdateMemoryInput{ActingFor: of, Shared: &yes, ID: &sid,
			Content: str("The office is closed on Fridays and Saturdays, in metric units, " + uuid.NewString())})
		must("shared memories update", err)
	}
	a.WaitEmbedded()

	var u auth.Principal
	for {
		u = auth.Principal{Role: auth.RoleUser, UserID: "auth0|" + uuid.NewString(), TenantID: "t1"}
		if apart(u.UserID) {
			break
		}
	}
	forU := app.ActingFor{UserID: &u.UserID, TenantID: str("t1")}
	agent := str("bot")
	for _, caller := range []struct {
		name string
		pr   auth.Principal
		as   app.ActingFor
	}{{"user", u, app.ActingFor{}}, {"service", service, forU}} {
		flow := func(name string) { plans.Flow(caller.name + " " + name) }
		flow("active-session")
		as, err := a.ActiveSession(ctx, caller.pr, app.ActiveSessionInput{ActingFor: caller.as, Agent: agent})
		must("resolve", err)
		_, err = a.ActiveSession(ctx, caller.pr, app.ActiveSessionInput{ActingFor: caller.as, Agent: agent})
		must("resolve again", err)
		chosen := uuid.NewString()
		_, err = a.ActiveSession(ctx, caller.pr, app.ActiveSessionInput{ActingFor: caller.as, Agent: agent,
			Mode: str("activate"), SessionID: &chosen})
		must("activate", err)
		_, err = a.ActiveSession(ctx, caller.pr, app.ActiveSessionInput{ActingFor: caller.as, Agent: agent, Mode: str("new"),
			Metadata: json.RawMessage(`{"channel":"web"}`)})
		must("new", err)
		sid := as.SessionID.String()

		flow("commit-turn")
		for i := range 7 {
			_, err = a.CommitTurn(ctx, caller.pr, app.CommitTurnInput{ActingFor: caller.as, SessionID: &sid, Agent: agent,
				Messages: []app.MessageInput{msg("user", fmt.Sprintf("My name is Ada and I prefer metric units %d", i)),
					msg("assistant", "Noted, Ada.")},
				Memories: []app.MemoryInput{{Content: str(fmt.Sprintf("Prefers metric units %d", i))}}})
			must("commit", err)
		}
		// Turns of many messages: the scope's pending words pass the threshold at which a commit
		// counts them (agentmem.fold_message_words), and the session passes the history cap,
		// past which the sweep moves its oldest messages to the archive.
		for range 6 {
			var many []app.MessageInput
			for i := range 100 {
				many = append(many, msg("user", fmt.Sprintf("Tea number %d was green", i)))
			}
			_, err = a.CommitTurn(ctx, caller.pr, app.CommitTurnInput{ActingFor: caller.as, SessionID: &sid, Agent: agent,
				Messages: many})
			must("commit of many messages", err)
		}
		id := "lc_run--" + uuid.NewString()
		for range 2 { // the second is a replay
			_, err = a.CommitTurn(ctx, caller.pr, app.CommitTurnInput{ActingFor: caller.as, SessionID: &sid, Agent: agent,
				Messages:    []app.MessageInput{{ID: &id, Role: str("user"), Content: json.RawMessage(`"Lisbon is home"`)}},
				Idempotency: &app.IdempotencyKey{Key: "k-" + id, Present: true, RequestHash: app.RequestHash([]byte(id))}})
			must("commit with an idempotency key", err)
		}
		a.WaitEmbedded()
		// The sweep counts the turns' words, so that deleting messages later subtracts counts,
		// and archives the oldest messages of the session.
		plans.Flow("sweep")
		_, err = a.SweepExpired(ctx, service, app.SweepInput{})
		must("sweep", err)

		flow("get-context")
		for _, format := range []string{app.FormatRaw, app.FormatOpenAI, app.FormatAnthropic} {
			_, err = a.GetContext(ctx, caller.pr, app.GetContextInput{ActingFor: caller.as, SessionID: &sid, Agent: agent,
				Query: str("which units?"), Format: &format, UserContext: ptr(true)})
			must("get-context", err)
		}
		_, err = a.GetContext(ctx, caller.pr, app.GetContextInput{ActingFor: caller.as, SessionID: &sid, Agent: agent,
			Since: str(time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)), AnswersOnly: ptr(true)})
		must("get-context since", err)

		flow("recall")
		for _, source := range []string{"memories", "messages", "all"} {
			for _, mode := range []string{"hybrid", "vector", "text"} {
				_, err = a.Recall(ctx, caller.pr, app.RecallInput{ActingFor: caller.as, Query: str("metric units"),
					Agent: agent, Source: &source, Mode: &mode})
				must("recall "+source+" "+mode, err)
			}
		}
		_, err = a.Recall(ctx, caller.pr, app.RecallInput{ActingFor: caller.as, Query: str("metric units"), Agent: agent,
			Source: str("messages"), Neighbours: ptr(int64(2)), Role: str("user"),
			Since: str(time.Now().Add(-time.Hour).UTC().Format(time.RFC3339))})
		must("recall messages with neighbours", err)
		_, err = a.Recall(ctx, caller.pr, app.RecallInput{ActingFor: caller.as, Query: str("metric"),
			Filter: json.RawMessage(`{"kind":"x"}`), MMRLambda: ptr(0.5)})
		must("recall with a filter", err)
		_, err = a.ListMemories(ctx, caller.pr, app.ListMemoriesInput{ActingFor: app.ActingFor{TenantID: caller.as.TenantID},
			Shared: &yes})
		must("list of the tenant's shared memories", err)

		flow("recall without shared")
		for _, source := range []string{"memories", "all"} {
			_, err = a.Recall(ctx, caller.pr, app.RecallInput{ActingFor: caller.as, Query: str("metric units"),
				Agent: agent, Source: &source, IncludeShared: &no})
			must("recall without shared "+source, err)
		}
		_, err = a.GetContext(ctx, caller.pr, app.GetContextInput{ActingFor: caller.as, SessionID: &sid, Agent: agent,
			Query: str("which units?"), IncludeShared: &no})
		must("get-context without shared", err)

		flow("memories")
		created, err := a.CreateMemory(ctx, caller.pr, app.CreateMemoryInput{ActingFor: caller.as, Agent: agent,
			Content: str("Lives in Lisbon"), Metadata: json.RawMessage(`{"kind":"place"}`)})
		must("memories create", err)
		_, err = a.CreateMemory(ctx, caller.pr, app.CreateMemoryInput{ActingFor: caller.as, Agent: agent,
			Content: str("lives in Lisbon."), Idempotency: &app.IdempotencyKey{Key: "m-" + sid, Present: true,
				RequestHash: app.RequestHash([]byte(sid))}})
		must("memories create again", err)
		list, err := a.ListMemories(ctx, caller.pr, app.ListMemoriesInput{ActingFor: caller.as, Agent: agent, Limit: ptr(int64(2))})
		must("memories list", err)
		if list.NextCursor != nil {
			_, err = a.ListMemories(ctx, caller.pr, app.ListMemoriesInput{ActingFor: caller.as, Agent: agent, Limit: ptr(int64(2)),
				Cursor: list.NextCursor})
			must("memories list page 2", err)
		}
		mid := created.ID.String()
		_, err = a.GetMemory(ctx, caller.pr, app.OneMemoryInput{ActingFor: caller.as, ID: &mid})
		must("memories get", err)
		_, err = a.UpdateMemory(ctx, caller.pr, app.UpdateMemoryInput{ActingFor: caller.as, ID: &mid, Content: str("Lives in Porto")})
		must("memories update", err)
		_, err = a.DeleteMemory(ctx, caller.pr, app.OneMemoryInput{ActingFor: caller.as, ID: &mid})
		must("memories delete", err)

		flow("user-memory")
		_, err = a.SetUserMemory(ctx, caller.pr, app.UserMemoryInput{ActingFor: caller.as, Key: str("prefs"), Value: json.RawMessage(`{"units":"metric"}`)})
		must("user-memory set", err)
		_, err = a.SetUserMemory(ctx, caller.pr, app.UserMemoryInput{ActingFor: caller.as, Key: str("prefs"), Value: json.RawMessage(`{"units":"si"}`)})
		must("user-memory set again", err)
		_, err = a.GetUserMemory(ctx, caller.pr, app.UserMemoryInput{ActingFor: caller.as, Key: str("prefs")})
		must("user-memory get", err)
		_, err = a.ListUserMemory(ctx, caller.pr, app.UserMemoryInput{ActingFor: caller.as})
		must("user-memory list", err)
		_, err = a.DeleteUserMemory(ctx, caller.pr, app.UserMemoryInput{ActingFor: caller.as, Key: str("prefs")})
		must("user-memory delete", err)
		_, err = a.ClearUserMemory(ctx, caller.pr, app.UserMemoryInput{ActingFor: caller.as})
		must("user-memory clear", err)

		flow("user-state")
		for _, mode := range []string{"halted", "running"} {
			_, err = a.SetUserState(ctx, caller.pr, app.UserStateInput{ActingFor: caller.as, Mode: &mode})
			must("user-state set", err)
		}
		_, err = a.GetUserState(ctx, caller.pr, app.UserStateInput{ActingFor: caller.as})
		must("user-state get", err)
		_, err = a.DeleteUserState(ctx, caller.pr, app.UserStateInput{ActingFor: caller.as})
		must("user-state delete", err)

		flow("notes")
		_, err = a.EditNotes(ctx, caller.pr, memory.NotesAppend, app.NotesInput{ActingFor: caller.as, Agent: agent,
			Content: str("## Units\n- metric")})
		must("notes append", err)
		_, err = a.EditNotes(ctx, caller.pr, memory.NotesReplaceSection, app.NotesInput{ActingFor: caller.as, Agent: agent,
			Section: str("Units"), Content: str("- SI")})
		must("notes replace_section", err)
		_, err = a.ReadNotes(ctx, caller.pr, app.NotesInput{ActingFor: caller.as, Agent: agent})
		must("notes read", err)
		_, err = a.EditNotes(ctx, caller.pr, memory.NotesDeleteSection, app.NotesInput{ActingFor: caller.as, Agent: agent,
			Section: str("Units")})
		must("notes delete_section", err)
		_, err = a.ClearNotes(ctx, caller.pr, app.NotesInput{ActingFor: caller.as, Agent: agent})
		must("notes clear", err)

		flow("user-context")
		_, err = a.UserContext(ctx, caller.pr, app.UserContextInput{ActingFor: caller.as, Agent: agent})
		must("user context", err)

		flow("intents")
		for _, typ := range []string{adapter.SyncSession, adapter.BackfillSession} {
			_, err = a.CreateIntent(ctx, caller.pr, app.IntentInput{ActingFor: caller.as, Type: &typ, SessionID: &sid})
			must("intent "+typ, err)
		}

		flow("rate-limit")
		must("limit", a.LimitRequest(ctx, caller.pr, caller.as))

		flow("sessions")
		sessions, err := a.ListSessions(ctx, caller.pr, app.ListSessionsInput{ActingFor: caller.as, Limit: ptr(int64(1))})
		must("sessions list", err)
		_, err = a.ListSessions(ctx, caller.pr, app.ListSessionsInput{ActingFor: caller.as, Limit: ptr(int64(1)), Offset: ptr(int64(1))})
		must("sessions list by offset", err)
		if sessions.NextCursor != nil {
			_, err = a.ListSessions(ctx, caller.pr, app.ListSessionsInput{ActingFor: caller.as, Agent: agent,
				Limit: ptr(int64(1)), Cursor: sessions.NextCursor})
			must("sessions list page 2", err)
		}
		for _, order := range []string{"oldest", "newest"} {
			page, err := a.SessionHistory(ctx, caller.pr, app.SessionHistoryInput{ActingFor: caller.as, SessionID: &sid,
				Agent: agent, Order: &order, Limit: ptr(int64(3))})
			must("history of a session", err)
			if page.NextCursor != nil {
				_, err = a.SessionHistory(ctx, caller.pr, app.SessionHistoryInput{ActingFor: caller.as, SessionID: &sid,
					Agent: agent, Order: &order, Limit: ptr(int64(3)), Cursor: page.NextCursor})
				must("history of a session, page 2", err)
			}
			_, err = a.SessionHistory(ctx, caller.pr, app.SessionHistoryInput{ActingFor: caller.as, SessionID: &sid,
				Order: &order, Limit: ptr(int64(3)), Offset: ptr(int64(5)), IncludeArchived: ptr(true), AnswersOnly: ptr(true)})
			must("history of a session with its archive", err)
			_, err = a.SessionHistory(ctx, caller.pr, app.SessionHistoryInput{ActingFor: caller.as, Order: &order,
				Limit: ptr(int64(3)), IncludeArchived: ptr(true)})
			must("history of the user with the archive", err)
			page, err = a.SessionHistory(ctx, caller.pr, app.SessionHistoryInput{ActingFor: caller.as, Order: &order,
				Limit: ptr(int64(3)), Since: str(time.Now().Add(-time.Hour).UTC().Format(time.RFC3339))})
			must("history of the user", err)
			if page.NextCursor != nil {
				_, err = a.SessionHistory(ctx, caller.pr, app.SessionHistoryInput{ActingFor: caller.as, Order: &order,
					Limit: ptr(int64(3)), Cursor: page.NextCursor})
				must("history of the user, page 2", err)
			}
		}
		_, err = a.SetSessionTitle(ctx, caller.pr, app.SetSessionTitleInput{ActingFor: caller.as, SessionID: &sid, Agent: agent,
			Title: json.RawMessage(`"Units"`)})
		must("set_title", err)
		_, err = a.SetSessionMetadata(ctx, caller.pr, app.SetSessionMetadataInput{ActingFor: caller.as, SessionID: &sid,
			Agent: agent, Metadata: json.RawMessage(`{"topic":"units"}`)})
		must("set_metadata", err)
		_, err = a.DeleteMessage(ctx, caller.pr, app.SessionChangeInput{ActingFor: caller.as, SessionID: &sid, Agent: agent,
			MessageID: &id})
		must("delete_message", err)
		_, err = a.CommitTurn(ctx, caller.pr, app.CommitTurnInput{ActingFor: caller.as, SessionID: &sid, Agent: agent,
			Messages: []app.MessageInput{{ID: &id, Role: str("user"), Content: json.RawMessage(`"Lisbon again"`)}}})
		must("commit with a client id again", err)
		_, err = a.DeleteMessage(ctx, caller.pr, app.SessionChangeInput{ActingFor: caller.as, MessageID: &id})
		must("delete_message by its id alone", err)
		_, err = a.ResetSession(ctx, caller.pr, app.SessionChangeInput{ActingFor: caller.as, SessionID: &sid, Agent: agent})
		must("reset", err)
		_, err = a.DeleteSession(ctx, caller.pr, app.SessionChangeInput{ActingFor: caller.as, SessionID: &chosen, Agent: agent})
		must("delete", err)
		_, err = a.ClearMessages(ctx, caller.pr, app.SessionsClearInput{ActingFor: caller.as, Agent: agent})
		must("clear", err)

		flow("knowledge")
		_, err = a.SearchKnowledge(ctx, caller.pr, app.KnowledgeSearchInput{Op: "search", TenantID: str("t1"), Query: str("refunds")})
		if caller.name == "user" {
			must("knowledge search", err)
		}
	}

	// Another user's session is missing, for the caller (404), on this layout too.
	plans.Flow("user another's session")
	other := "other-0"
	theirs, err := a.ActiveSession(ctx, auth.Principal{Role: auth.RoleUser, UserID: other}, app.ActiveSessionInput{})
	must("another user's session", err)
	theirID := theirs.SessionID.String()
	_, err = a.ActiveSession(ctx, u, app.ActiveSessionInput{Mode: str("activate"), SessionID: &theirID})
	if !isNotFound(err) {
		t.Errorf("activating another user's session: %v, want not found", err)
	}
	_, err = a.CommitTurn(ctx, u, app.CommitTurnInput{SessionID: &theirID, Messages: []app.MessageInput{msg("user", "hi")}})
	if !isNotFound(err) {
		t.Errorf("committing to another user's session: %v, want not found", err)
	}

	plans.Flow("process-jobs")
	for range 5 {
		out, err := a.ProcessJobs(ctx, service, app.ProcessJobsInput{})
		must("process-jobs", err)
		if out.Processed == 0 && !out.More {
			break
		}
	}
	plans.Flow("jobs")
	jobs, err := a.ListJobs(ctx, service, app.ListJobsInput{Limit: ptr(int64(2))})
	must("jobs list", err)
	if len(jobs.Jobs) > 0 {
		jid := jobs.Jobs[0].ID.String()
		_, err = a.GetJob(ctx, service, app.OneJobInput{ID: &jid})
		must("jobs get", err)
	}
	_, err = a.PurgeJobs(ctx, service, app.PurgeJobsInput{Status: str("done")})
	must("jobs purge", err)
	plans.Flow("embed-pending")
	_, err = a.EmbedPending(ctx, 100, time.Minute)
	must("embed-pending", err)
	plans.Flow("sweep")
	_, err = a.SweepExpired(ctx, service, app.SweepInput{})
	must("sweep", err)

	plans.Flow("user forget-user")
	_, err = a.ForgetUser(ctx, u, app.ForgetUserInput{})
	must("forget-user", err)

	// The sweep's dry run counts every user's expired messages: it must be seen reading every
	// partition.
	plans.Flow("self-check")
	_, err = a.SweepExpired(ctx, service, app.SweepInput{DryRun: ptr(true)})
	must("sweep dry run", err)
}

func isNotFound(err error) bool {
	return err != nil && app.Problem(err).Code == apierror.NotFound
}
