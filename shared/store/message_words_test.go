package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// messageWordsDriftSQL counts the rows in which the word counts (agentmem.message_words, plus
// the counts of the messages still pending in agentmem.message_words_pending) differ from the
// counts of the stored messages (per scope and lexeme; the empty lexeme their number and total
// length), and the pending rows that name no message.
var messageWordsDriftSQL = `with recount as (` + wordRecountSQL("messages") + `),
pending as (
  select m.user_id, m.tenant_id, m.agent, m.fts from agentmem.message_words_pending p
  join agentmem.messages m on (m.session_id, m.seq, m.user_id, m.tenant_id, m.agent) = (p.session_id, p.seq, p.user_id, p.tenant_id, p.agent)
),
counts as (
  select user_id, tenant_id, agent, lexeme, sum(docs) as docs, sum(length) as length from (
    select user_id, tenant_id, agent, lexeme, docs, length from agentmem.message_words
    union all
    select p.user_id, p.tenant_id, p.agent, u.lexeme, 1, 0 from pending p, unnest(p.fts) u
    union all
    select p.user_id, p.tenant_id, p.agent, '', 1, length(p.fts) from pending p) c
  group by 1, 2, 3, 4
)
select (select count(*) from (
  (select * from counts except all select * from recount)
  union all
  (select * from recount except all select * from counts)) d)
  + (select count(*) from agentmem.message_words_pending p
     where not exists (select 1 from agentmem.messages m where m.session_id = p.session_id and m.seq = p.seq))`

// wordRecountSQL counts, per scope (user, tenant, agent) and lexeme of the rows of
// agentmem.<table>, how many hold the lexeme; the empty lexeme, how many rows there are and
// their total length: what the word counts of the table should hold.
func wordRecountSQL(table string) string {
	return `
  select m.user_id, m.tenant_id, m.agent, u.lexeme, count(*) as docs, 0::bigint as length
  from agentmem.` + table + ` m, unnest(m.fts) u group by 1, 2, 3, 4
  union all
  select m.user_id, m.tenant_id, m.agent, '', count(*), sum(length(m.fts))
  from agentmem.` + table + ` m group by 1, 2, 3
`
}

// noWordDrift fails t when the word counts differ from the stored messages' after step.
func noWordDrift(t *testing.T, e *rankEnv, step string) {
	t.Helper()
	var n int
	if err := e.conn.QueryRow(t.Context(), messageWordsDriftSQL).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("after %s: %d word counts differ from the stored messages'", step, n)
	}
}

// The word counts BM25 reads follow the messages as they are committed, deleted one by one,
// cleared, deleted with their session, swept and erased, and an erased user leaves none; the
// sweep counts the pending messages.
func TestMessageWordsFollowTheMessages(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	user, other := uuid.New(), uuid.New()
	drift := func(step string) { t.Helper(); noWordDrift(t, e, step) }
	words := func(u uuid.UUID) int {
		t.Helper()
		var n int
		if err := e.conn.QueryRow(ctx, `select count(*) from agentmem.message_words where user_id = $1`, u).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	scopes := []memory.Scope{{UserID: user.String(), Agent: "chat"}, {UserID: user.String(), Agent: "mail"}, {UserID: user.String(), TenantID: "acme", Agent: "chat"}, {UserID: other.String(), Agent: "chat"}}
	var sessions []uuid.UUID
	for i, sc := range scopes {
		for s := 0; s < 2; s++ {
			r := commitMessages(t, e.st, sc, uuid.New(), []memory.NewMessage{
				{Role: memory.RoleUser, Content: fmt.Sprintf("John asked about the budget review %d", i), Name: ptr("John")},
				{Role: memory.RoleAssistant, Content: "The budget review is on Monday, John", Name: ptr("Maria")},
				msg(memory.RoleUser, fmt.Sprintf("Thanks! Session %d of scope %d", s, i)),
			})
			sessions = append(sessions, r.SessionID)
		}
	}
	drift("commits")
	var second uuid.UUID
	if err := e.conn.QueryRow(ctx, `select id from agentmem.messages where session_id = $1 and seq = 2`, sessions[0]).Scan(&second); err != nil {
		t.Fatal(err)
	}
	if err := e.st.DeleteMessage(ctx, scopes[0], &sessions[0], second.String()); err != nil {
		t.Fatal(err)
	}
	drift("a message deleted")
	if err := e.st.DeleteSession(ctx, scopes[1], sessions[2]); err != nil {
		t.Fatal(err)
	}
	drift("a session deleted")
	if _, err := e.st.ClearMessages(ctx, scopes[2]); err != nil {
		t.Fatal(err)
	}
	drift("messages cleared")
	if _, err := e.conn.Exec(ctx, `update agentmem.messages set expires_at = now() - interval '1 second' where session_id = $1`, sessions[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.Sweep(ctx, store.SweepParams{BatchSize: 100, Deadline: time.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	drift("a sweep")
	var pending int
	if err := e.conn.QueryRow(ctx, `select count(*) from agentmem.message_words_pending`).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending != 0 {
		t.Fatalf("after a sweep, %d messages are still pending", pending)
	}
	if words(other) == 0 {
		t.Fatal("the other user's words are not counted")
	}
	if _, err := e.st.ForgetUser(ctx, store.ForgetParams{UserID: user.String(), AllTenants: true}); err != nil {
		t.Fatal(err)
	}
	drift("an erasure")
	if n := words(user); n != 0 {
		t.Errorf("the erased user still has %d word counts", n)
	}
	if words(other) == 0 {
		t.Error("the erasure took the other user's word counts")
	}
	if _, err := e.conn.Exec(ctx, `truncate agentmem.messages`); err != nil {
		t.Fatal(err)
	}
	drift("a truncation")
	if n := words(other); n != 0 {
		t.Errorf("after a truncation of messages, %d word counts remain", n)
	}
}

// BM25 over messages scores the messages that hold a rare word of the query (and their
// neighbours) first and the rest only when they could rank: its answer is exactly that of
// scoring every message that holds a word of the query, with and without the credit of
// neighbours, and with filters.
func TestMessageBM25PruningKeepsTheExactAnswer(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	sc := memory.Scope{UserID: uuid.NewString(), Agent: "chat"}
	rare := []string{"clarinet", "marathon", "lasagna", "telescope", "violin", "kayak"}
	for s := 0; s < 4; s++ {
		var msgs []memory.NewMessage
		for i := 0; i < 50; i++ {
			name, text := "John", fmt.Sprintf("Nice weather today, number %d", i)
			if i%2 == 1 {
				name, text = "Maria", fmt.Sprintf("John, did you sleep well? Day %d", i)
			}
			if i%7 == 3 {
				text = fmt.Sprintf("I bought a %s on day %d", rare[(s+i)%len(rare)], i)
			}
			msgs = append(msgs, memory.NewMessage{Role: []string{memory.RoleUser, memory.RoleAssistant}[i%2], Content: text, Name: &name})
		}
		commitMessages(t, e.st, sc, uuid.New(), msgs)
	}
	// pruned is message_bm25_hits; full asks it for every message (more than it can find, so
	// it cannot prune) and keeps the first n.
	const pruned = `select session_id::text || '/' || seq, score, relevance from agentmem.message_bm25_hits($1, '', 'chat', '{}', $4, '', null, null,
	  agentmem.query_terms($2), $3, false, $5)`
	const full = `select h.session_id::text || '/' || h.seq, h.score, h.relevance from agentmem.message_bm25_hits($1, '', 'chat', '{}', $4, '', null, null,
	    agentmem.query_terms($2), 100000, false, $5) h order by h.score desc, h.session_id, h.seq limit $3`
	// Asked as the functions ask it: in the functions' role with the user's claims.
	answer := func(sql, query, speaker string, n int, follow float64) []string {
		t.Helper()
		var out []string
		err := asRole(t, e.conn, store.CallerRole, map[string]any{"role": "authenticated", "sub": sc.UserID}, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, sql, sc.UserID, query, n, speaker, follow)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var key string
				var score, rel float64
				if err := rows.Scan(&key, &score, &rel); err != nil {
					return err
				}
				out = append(out, fmt.Sprintf("%s %.12f %.12f", key, score, rel))
			}
			return rows.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, query := range []string{"Did John buy a clarinet?", "What did Maria say to John about the kayak and the violin?",
		"John weather", "Did John buy a telescope or a marathon lasagna?"} {
		for _, speaker := range []string{"", "Maria"} {
			for _, follow := range []float64{0, 0.5} {
				for _, n := range []int{3, 10} {
					got, want := answer(pruned, query, speaker, n, follow), answer(full, query, speaker, n, follow)
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("%q (speaker %q, follow %v, n %d):\n got %v\nwant %v", query, speaker, follow, n, got, want)
					}
					if len(got) == 0 {
						t.Errorf("%q (speaker %q, follow %v, n %d): nothing found", query, speaker, follow, n)
					}
				}
			}
		}
	}
	// The pruning took place: a query of a rare word read fewer messages than hold "john".
	var scored, john int
	if err := e.conn.QueryRow(ctx, `select count(*) from agentmem.messages where user_id = $1 and fts @@ 'john'::tsquery`, sc.UserID).Scan(&john); err != nil {
		t.Fatal(err)
	}
	err := asRole(t, e.conn, store.CallerRole, map[string]any{"role": "authenticated", "sub": sc.UserID}, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `select count(*) from agentmem.message_bm25_scored($1, '', 'chat', '{}', '', '', null, null,
		agentmem.terms_query(agentmem.query_terms('Did John buy a clarinet?')), 'clarinet'::tsquery, 2,
		array['buy', 'clarinet', 'john']::tsquery[], array['buy:A', 'clarinet:A', 'john:A']::tsquery[], array[1, 1, 1]::float8[], 5, 1, 100000, 0.5)`,
			sc.UserID).Scan(&scored)
	})
	if err != nil {
		t.Fatal(err)
	}
	if scored == 0 || scored >= john {
		t.Errorf("the rare word's messages and their neighbours: %d scored of %d that hold john", scored, john)
	}
}

// The first pass reads the turns beside the rare word's messages only where they can rank: of a
// user's 800 messages, all holding "trip" and 20 also "zanzibar", in sessions of ten, a question
// for the best 3 reads a few turns beside the best matches (at most 40 index entries and rows),
// where the join of every turn beside every match read all 800 of the user's messages; and the
// answer is the one scoring every message finds.
func TestMessageBM25ReadsOnlyTheTurnsThatCanRank(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	user := uuid.New()
	var texts, meta []string
	filler := []string{"harbour", "lantern", "meadow", "copper", "orchard", "velvet", "walnut"}
	for i := range 800 {
		text := fmt.Sprintf("A note on the trip, entry %d", i)
		if i%40 == 13 {
			// lengths differ, so that the matches' scores do
			text = fmt.Sprintf("The zanzibar trip %s", strings.Join(filler[:(i/40)%len(filler)], " "))
		}
		texts, meta = append(texts, text), append(meta, `{}`)
	}
	e.seedMessages(t, user, "chat", texts, meta)
	if _, err := e.conn.Exec(ctx, "analyze agentmem.messages"); err != nil {
		t.Fatal(err)
	}
	ask := func(n int, follow float64) (hits []string, read int64) {
		t.Helper()
		err := asRole(t, e.conn, store.CallerRole, map[string]any{"role": "authenticated", "sub": user.String()}, func(tx pgx.Tx) error {
			before := rowsRead(t, tx, "agentmem.messages")
			var err error
			hits, err = rankedKeys(tx, `select session_id::text || '/' || seq, score from agentmem.message_bm25_hits($1, '', '', '{}', '', '', null, null,
				agentmem.query_terms('zanzibar trip'), $2, false, $3)`, user.String(), n, follow)
			if err != nil {
				return err
			}
			read = rowsRead(t, tx, "agentmem.messages") - before
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return hits, read
	}
	got, read := ask(3, 0.5)
	// without credit, the first pass reads the same statistics and matches and no turn beside
	_, alone := ask(3, 0)
	// asked for more than the first pass can prove, BM25 scores every message of either word
	all, _ := ask(1000, 0.5)
	if len(got) != 3 || len(all) < 3 {
		t.Fatalf("%d hits for the best 3, %d for all", len(got), len(all))
	}
	for i := range got {
		if got[i] != all[i] {
			t.Errorf("hit %d of the first pass: %v, scoring every message: %v", i, got[i], all[i])
		}
	}
	if beside := read - alone; beside <= 0 || beside > 40 {
		t.Errorf("the first pass read %d index entries and rows of the turns beside its matches, want 1 to 40", beside)
	}
}

// The first pass answers what scoring every message answers, on conversations drawn at random
// (fixed seeds): words of every frequency, questions and replies in any order, the matches of
// rare words side by side or a turn apart, asked for the best 3 and 10, with light and heavy
// credit; and the first pass answered at least 20 of the 160 (53 when written).
func TestMessageBM25FirstPassAgreesOnRandomConversations(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	user := uuid.New().String()
	r := rand.New(rand.NewPCG(7, 11))
	// four words in most messages, and the others drawn with weight 1/(k+1): a few in many
	// messages, most in a few
	vocab := make([]string, 80)
	for k := range vocab {
		vocab[k] = fmt.Sprintf("w%cq%c", 'a'+k/26, 'a'+k%26)
	}
	common := []float64{0.8, 0.6, 0.45, 0.35}
	words := func() []string {
		var out []string
		for k, p := range common {
			if r.Float64() < p {
				out = append(out, vocab[k])
			}
		}
		for range 1 + r.IntN(6) {
			for {
				k := len(common) + r.IntN(len(vocab)-len(common))
				if r.Float64() < float64(len(common)+1)/float64(k+1) {
					out = append(out, vocab[k])
					break
				}
			}
		}
		r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		return out
	}
	// the user's 800 messages, among 7,200 of nine others drawn alike
	for u := range 10 {
		owner := user
		if u > 0 {
			owner = uuid.NewString()
		}
		var sessions, texts, names []string
		for s := 0; s < 40; s++ {
			sid := uuid.NewString()
			for i := 0; i < 20; i++ {
				text := strings.Join(words(), " ")
				if r.IntN(4) == 0 {
					text += "?"
				}
				sessions, texts, names = append(sessions, sid), append(texts, text), append(names, []string{"John", "Maria"}[r.IntN(2)])
			}
		}
		insertTalk(t, e.conn, owner, 20, sessions, texts, names)
	}
	if _, err := e.conn.Exec(ctx, "analyze agentmem.messages"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.conn.Exec(ctx, "set track_functions = 'all'"); err != nil {
		t.Fatal(err)
	}
	// calls of agentmem.terms_query and agentmem.message_bm25_scored in the transaction: a first
	// pass makes the rare words' query (and the query of the words some message holds)
	calls := func(tx pgx.Tx) (terms, passes int64) {
		t.Helper()
		if err := tx.QueryRow(ctx, `select coalesce(pg_stat_get_xact_function_calls('agentmem.terms_query'::regproc), 0),
			coalesce(pg_stat_get_xact_function_calls('agentmem.message_bm25_scored'::regproc), 0)`).Scan(&terms, &passes); err != nil {
			t.Fatal(err)
		}
		return terms, passes
	}
	answer := func(query string, n int, follow float64) (out []string, first bool) {
		t.Helper()
		err := asRole(t, e.conn, store.CallerRole, map[string]any{"role": "authenticated", "sub": user}, func(tx pgx.Tx) error {
			terms, passes := calls(tx)
			var err error
			out, err = rankedKeys(tx, `select session_id::text || '/' || seq, score from agentmem.message_bm25_hits($1, '', 'chat', '{}', '', '', null, null,
				agentmem.query_terms($2), $3, false, $4)`, user, query, n, follow)
			if err != nil {
				return err
			}
			moreTerms, morePasses := calls(tx)
			first = moreTerms-terms > 1 && morePasses-passes == 1
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out, first
	}
	pruned := 0
	for q := 0; q < 40; q++ {
		// a common word or two and a rarer one or two
		words := []string{vocab[r.IntN(4)], vocab[20+r.IntN(60)]}
		if q%2 == 0 {
			words = append(words, vocab[r.IntN(10)], vocab[30+r.IntN(50)])
		}
		if q%5 == 0 {
			words = append(words, "maria")
		}
		query := strings.Join(words, " ")
		for _, follow := range []float64{0.5, 2} {
			// asked for more than any first pass can prove, BM25 scores every message
			all, _ := answer(query, 1000, follow)
			for _, n := range []int{3, 10} {
				got, first := answer(query, n, follow)
				want := all[:min(n, len(all))]
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%q (follow %v, n %d):\n got %v\nwant %v", query, follow, n, got, want)
				}
				if first {
					pruned++
				}
			}
		}
	}
	// the first pass answered some of them (else this compares the full pass with itself)
	if pruned < 20 {
		t.Errorf("the first pass answered %d of the 160 questions, want at least 20", pruned)
	}
}

// agentmem.message_bm25_scored's first pass (the rare words' matches and the turns beside them)
// answers its top n as if it scored every one of them, whatever the credit: positive, none,
// or negative (which turns its bounds over), and when no n is given, all of them.
func TestMessageBM25FirstPassIsExactForAnyCredit(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	user := uuid.New().String()
	r := rand.New(rand.NewPCG(3, 5))
	vocab := []string{"harbour", "lantern", "meadow", "copper", "orchard", "velvet", "walnut", "zebra", "quagga", "ibis"}
	var sessions, texts, names []string
	for s := 0; s < 30; s++ {
		sid := uuid.NewString()
		for i := 0; i < 12; i++ {
			var words []string
			for range 1 + r.IntN(5) {
				// harbour in most messages, ibis in few
				words = append(words, vocab[min(r.IntN(len(vocab)), r.IntN(len(vocab)), r.IntN(len(vocab)))])
			}
			text := strings.Join(words, " ")
			if r.IntN(3) == 0 {
				text += "?"
			}
			sessions, texts, names = append(sessions, sid), append(texts, text), append(names, vocab[r.IntN(len(vocab))])
		}
	}
	insertTalk(t, e.conn, user, 12, sessions, texts, names)
	// the arguments message_bm25_hits gives a first pass: the statistics' weights, and the rarer
	// words (here those in at most a fifth of the messages) as the candidates' query
	const scored = `with t as (select agentmem.query_terms($2) as terms),
	s as (select x.* from t, agentmem.message_word_stats($1, '', 'chat', t.terms) x),
	w as (select u.term, u.k, s.docs, u.df, pg_catalog.ln(1 + (s.docs - u.df + 0.5) / (u.df + 0.5)) as idf
	      from t, s, rows from (unnest(t.terms), unnest(s.dfs)) with ordinality u(term, df, k))
	select h.session_id::text || '/' || h.seq, h.score from t, s, agentmem.message_bm25_scored($1, '', 'chat', '{}', '', '', null, null,
	  agentmem.terms_query(t.terms),
	  agentmem.terms_query(array(select w.term from w where w.df <= w.docs / 5 order by w.k)), 2,
	  array(select quote_literal(w.term)::tsquery from w order by w.k),
	  array(select (quote_literal(w.term) || ':A')::tsquery from w order by w.k),
	  array(select w.idf from w order by w.k), s.avgdl, 100, $3, $4) h`
	answer := func(query string, n *int, follow float64) []string {
		t.Helper()
		var out []string
		err := asRole(t, e.conn, store.CallerRole, map[string]any{"role": "authenticated", "sub": user}, func(tx pgx.Tx) error {
			var err error
			out, err = rankedKeys(tx, scored, user, query, n, follow)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	all := 100000
	for _, query := range []string{"harbour ibis", "harbour lantern quagga ibis", "meadow zebra", "harbour copper walnut zebra quagga"} {
		for _, follow := range []float64{-0.5, 0, 0.3, 1.5} {
			every := answer(query, &all, follow)
			if len(every) == 0 {
				t.Fatalf("%q: nothing matched", query)
			}
			for _, n := range []int{1, 3, 10} {
				if got, want := answer(query, &n, follow), every[:min(n, len(every))]; fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%q (follow %v, n %d):\n got %v\nwant %v", query, follow, n, got, want)
				}
			}
			if got := answer(query, nil, follow); fmt.Sprint(got) != fmt.Sprint(every) {
				t.Errorf("%q (follow %v, no n): %d rows, want the %d of every candidate", query, follow, len(got), len(every))
			}
		}
	}
}

// The rare words' messages are scored first only when they are under a quarter of the messages
// of all the question's words, and their weights exceed what the common words could add to a
// message (together, when they are under a twentieth; else the weight of the rare word with
// which the rarest words' messages reach n): else that pass is unlikely to save work. Counted with the calls of
// agentmem.message_bm25_scored in the transaction: one pass, or two when the first could not
// prove its answer.
func TestMessageBM25ScoresRareWordsFirstOnlyWhenItPays(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	sc := memory.Scope{UserID: uuid.NewString(), Agent: "chat"}
	var msgs []memory.NewMessage
	for i := 0; i < 200; i++ {
		text := fmt.Sprintf("Day %d was quiet", i)
		switch {
		case i%7 == 0:
			text = fmt.Sprintf("The weather on day %d was grey", i)
		case i%33 == 1:
			text = fmt.Sprintf("I practised the clarinet on day %d", i)
		case i%33 == 2:
			text = fmt.Sprintf("We took the kayak out on day %d", i)
		case i%33 == 3:
			text = fmt.Sprintf("She tuned her violin on day %d", i)
		}
		msgs = append(msgs, msg([]string{memory.RoleUser, memory.RoleAssistant}[i%2], text))
	}
	commitMessages(t, e.st, sc, uuid.New(), msgs)
	if _, err := e.conn.Exec(ctx, "set track_functions = 'all'"); err != nil {
		t.Fatal(err)
	}
	// passes: the calls of agentmem.message_bm25_scored; first: whether a first pass was
	// tried (it makes the rare words' query with agentmem.terms_query)
	passes := func(query string) (n int64, first bool, hits int) {
		t.Helper()
		// the session's calls not yet reported count too: the difference is this query's
		const calls = `select coalesce(pg_stat_get_xact_function_calls('agentmem.message_bm25_scored'::regproc), 0),
			coalesce(pg_stat_get_xact_function_calls('agentmem.terms_query'::regproc), 0)`
		err := asRole(t, e.conn, store.CallerRole, map[string]any{"role": "authenticated", "sub": sc.UserID}, func(tx pgx.Tx) error {
			var before, termsBefore, terms int64
			if err := tx.QueryRow(ctx, calls).Scan(&before, &termsBefore); err != nil {
				return err
			}
			if err := tx.QueryRow(ctx, `select count(*) from agentmem.message_bm25_hits($1, '', 'chat', '{}', '', '', null, null,
				agentmem.query_terms($2), 3, false, 0.5)`, sc.UserID, query).Scan(&hits); err != nil {
				return err
			}
			if err := tx.QueryRow(ctx, calls).Scan(&n, &terms); err != nil {
				return err
			}
			n -= before
			first = terms-termsBefore > 1
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n, first, hits
	}
	// weather: 29 messages; clarinet, kayak and violin: 6, 5 and 5, 16 in all, more than a
	// quarter of the 45 of any word.
	if n, first, hits := passes("weather clarinet kayak violin"); n != 1 || first || hits != 3 {
		t.Errorf("weather and three rare words: %d passes (a first: %v) and %d hits, want the full pass and 3 hits", n, first, hits)
	}
	// clarinet: 6 messages, under a quarter of the 35 of either word, but its weight (3.4) is
	// below what weather could add to a message (7.7): its messages are not scored first (they
	// were, in a pass that was then wasted).
	if n, first, hits := passes("weather clarinet"); n != 1 || first || hits != 3 {
		t.Errorf("weather and one rare word: %d passes (a first: %v) and %d hits, want the full pass and 3 hits", n, first, hits)
	}
	// quiet (about 150 messages) and weather: clarinet's 6 are under a twentieth of their
	// messages, but its weight (3.4) is still below what the two could add: not first.
	if n, first, hits := passes("quiet weather clarinet"); n != 1 || first || hits != 3 {
		t.Errorf("two common words and one rare word: %d passes (a first: %v) and %d hits, want the full pass and 3 hits", n, first, hits)
	}
	// quiet and the three rare words: these are over a twentieth of the 166 messages of all
	// four, under a quarter, and kayak alone (5 messages, weight 3.6) reaches the 3 asked for,
	// above what quiet could add (1.2): their messages are scored first, and prove the answer.
	if n, first, hits := passes("quiet clarinet kayak violin"); n != 1 || !first || hits != 3 {
		t.Errorf("quiet and three rare words: %d passes (a first: %v) and %d hits, want one first pass and 3 hits", n, first, hits)
	}
}

// A commit counts nothing itself: its messages wait in agentmem.message_words_pending until their
// scope holds the threshold's number, when a commit counts them all; BM25 reads the pending
// messages as if they were counted, so its answer is the same before and after a count, and
// deletes of counted and pending messages alike keep the counts exact.
func TestMessageWordsAreCountedInBatches(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	sc := memory.Scope{UserID: "user_2fold", Agent: "chat"}
	drift := func(step string) { t.Helper(); noWordDrift(t, e, step) }
	counts := func() (pending, words int) {
		t.Helper()
		if err := e.conn.QueryRow(ctx, `select (select count(*) from agentmem.message_words_pending where user_id = $1),
			(select count(*) from agentmem.message_words where user_id = $1)`, sc.UserID).Scan(&pending, &words); err != nil {
			t.Fatal(err)
		}
		return pending, words
	}
	var threshold int
	if err := e.conn.QueryRow(ctx, `select agentmem.fold_threshold()`).Scan(&threshold); err != nil {
		t.Fatal(err)
	}
	topics := []string{"budget", "garden", "violin", "harbour", "chess", "tomato", "glacier", "lantern"}
	session := uuid.New()
	turn := func(i int) {
		commitMessages(t, e.st, sc, session, []memory.NewMessage{
			msg(memory.RoleUser, fmt.Sprintf("Tell me about the %s and the %s, question %d", topics[i%len(topics)], topics[(i*3+1)%len(topics)], i)),
			msg(memory.RoleAssistant, fmt.Sprintf("The %s came first; note %d", topics[(i+5)%len(topics)], i)),
		})
	}
	for i := 0; i < 10; i++ {
		turn(i)
	}
	if pending, words := counts(); pending != 20 || words != 0 {
		t.Fatalf("after 10 turns: %d pending messages and %d word counts, want 20 and none", pending, words)
	}
	drift("10 turns")
	ask := func() []memory.Hit {
		t.Helper()
		hits, err := e.st.Recall(ctx, store.RecallParams{Scope: sc, Source: memory.SourceMessages, Query: "budget violin chess", K: 10, Mode: memory.ModeText})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 {
			t.Fatal("recall found nothing")
		}
		return hits
	}
	before := ask()
	if _, err := e.st.Sweep(ctx, store.SweepParams{BatchSize: 7, Deadline: time.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if pending, words := counts(); pending != 0 || words == 0 {
		t.Fatalf("after a sweep: %d pending messages and %d word counts, want none pending", pending, words)
	}
	drift("a sweep")
	after := ask()
	if len(after) != len(before) {
		t.Fatalf("recall gave %d hits with pending messages and %d with them counted", len(before), len(after))
	}
	for i := range before {
		if before[i].ID != after[i].ID || before[i].Score != after[i].Score {
			t.Errorf("hit %d: %s %.9f with pending messages, %s %.9f with them counted", i, before[i].ID, before[i].Score, after[i].ID, after[i].Score)
		}
	}
	// Past the threshold, a commit counts its scope's pending messages itself.
	for i := 10; i < 10+threshold; i++ {
		turn(i)
	}
	if pending, _ := counts(); pending >= threshold {
		t.Fatalf("after %d more turns, %d messages are pending, want fewer than %d", threshold, pending, threshold)
	}
	drift("commits past the threshold")
	// So do commits of sessions too short to reach a 32nd message: each new session's first
	// commit looks.
	short := memory.Scope{UserID: "user_2fold_short", Agent: "chat"}
	for i := 0; i < threshold/2+10; i++ {
		commitMessages(t, e.st, short, uuid.New(), []memory.NewMessage{
			msg(memory.RoleUser, fmt.Sprintf("Is the %s ready? ticket %d", topics[i%len(topics)], i)),
			msg(memory.RoleAssistant, fmt.Sprintf("The %s is on its way; ticket %d", topics[(i+3)%len(topics)], i)),
		})
	}
	if total, shortPending := 2*(threshold/2+10), pendingOf(t, e.conn, short.UserID); shortPending >= int64(threshold) {
		t.Fatalf("after %d messages in sessions of two, %d are pending, want fewer than %d", total, shortPending, threshold)
	}
	drift("short sessions past the threshold")
	// Delete messages both counted and pending.
	var counted, waiting string
	if err := e.conn.QueryRow(ctx, `select
		(select id from agentmem.messages m where m.session_id = $1 and not exists (select 1 from agentmem.message_words_pending p where p.session_id = m.session_id and p.seq = m.seq) order by seq limit 1),
		(select id from agentmem.messages m where m.session_id = $1 and exists (select 1 from agentmem.message_words_pending p where p.session_id = m.session_id and p.seq = m.seq) order by seq desc limit 1)`,
		session).Scan(&counted, &waiting); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{counted, waiting} {
		if err := e.st.DeleteMessage(ctx, sc, &session, id); err != nil {
			t.Fatal(err)
		}
	}
	drift("a counted and a pending message deleted")
	if err := e.st.DeleteSession(ctx, sc, session); err != nil {
		t.Fatal(err)
	}
	drift("the session deleted")
	if pending, words := counts(); pending != 0 || words != 0 {
		t.Errorf("after the session's deletion: %d pending messages and %d word counts remain", pending, words)
	}
}

// agentmem.message_word_matches runs with its owner's rights so that the full-text index can
// serve it: it answers a scope's matches to the caller of that scope only, never to a caller
// with another user's or tenant's claims, and a client role may not call it at all.
func TestMessageWordMatchesAnswerTheCallersOwnScope(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	victim := memory.Scope{UserID: "auth0|victim", TenantID: "acme", Agent: "chat"}
	commitMessages(t, e.st, victim, uuid.New(), []memory.NewMessage{msg(memory.RoleUser, "My locker code is in the blue notebook")})
	matches := func(role string, claims map[string]any) (int, error) {
		var n int
		err := asRole(t, e.conn, role, claims, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `select count(*) from agentmem.message_word_matches($1, $2, '', 'notebook'::tsquery)`,
				victim.UserID, victim.TenantID).Scan(&n)
		})
		return n, err
	}
	acme := map[string]any{"tenant_id": "acme"}
	for _, c := range []struct {
		name   string
		claims map[string]any
		want   int
	}{
		{"the victim", map[string]any{"role": "authenticated", "sub": victim.UserID, "app_metadata": acme}, 1},
		{"another user of the tenant", map[string]any{"role": "authenticated", "sub": "user_2attacker", "app_metadata": acme}, 0},
		{"the victim's id in another tenant", map[string]any{"role": "authenticated", "sub": victim.UserID, "app_metadata": map[string]any{"tenant_id": "evil"}}, 0},
		{"no claims", nil, 0},
	} {
		n, err := matches(store.CallerRole, c.claims)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n != c.want {
			t.Errorf("%s: %d matches, want %d", c.name, n, c.want)
		}
	}
	for _, role := range []string{"anon", "authenticated"} {
		if _, err := matches(role, map[string]any{"role": role, "sub": victim.UserID, "app_metadata": acme}); err == nil {
			t.Errorf("%s may call agentmem.message_word_matches", role)
		}
	}
}

// Deleting or rewriting a message changes the word counts of its own words and reads no others:
// the rows of agentmem.message_words it reads are a few per word, however many words its scope
// holds (it read the whole vocabulary of the scope, a quarter of a second a statement for
// 50,000 words). The work is counted by the index's reads in the transaction, not timed.
func TestMessageWordsChangeByTheirOwnWords(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	const words = 3000
	sid := uuid.New()
	tx, err := e.conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`insert into agentmem.sessions (id, user_id, agent, expires_at) values ($1, 'user_big', 'chat', now() + interval '1 day')`, sid)
	indexPages := func(index string) int64 {
		t.Helper()
		var n int64
		// Each partition's too, where the table is partitioned by user.
		if err := tx.QueryRow(ctx, `select coalesce(sum(pg_stat_get_xact_blocks_fetched(t.relid)), 0) from (
			select $1::regclass as relid union select relid from pg_partition_tree($1::regclass)) t`, index).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := indexPages("agentmem.message_words_pending_pkey")
	// Each message has a word of its own (its number), so the scope holds some 3,000 words,
	// all counted: the threshold is passed in the statement.
	exec(`insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, token_estimate, expires_at)
		select $1, g, gen_random_uuid(), 'user_big', 'chat', 'user', 'note ' || g, 2, now() + interval '1 day'
		from generate_series(1, $2::int) g`, sid, words)
	// The fold found each pending message through the whole key: a few index pages each (about
	// 12,000 pages for 3,000), not a walk over the scope's pending rows for each (43,000 when
	// tenant and agent could not bound the probe).
	if n := indexPages("agentmem.message_words_pending_pkey") - before; n > 7*words {
		t.Errorf("counting %d messages read %d pages of the pending rows' index, want %d or fewer", words, n, 7*words)
	}
	var pending, counted int
	if err := tx.QueryRow(ctx, `select (select count(*) from agentmem.message_words_pending),
		(select count(*) from agentmem.message_words where user_id = 'user_big')`).Scan(&pending, &counted); err != nil {
		t.Fatal(err)
	}
	if pending != 0 || counted < words {
		t.Fatalf("%d messages pending and %d words counted, want none pending and %d or more counted", pending, counted, words)
	}
	exec(`set local role service_role`)
	// each partition's too, where the table is partitioned by user
	reads := func() int64 { t.Helper(); return rowsRead(t, tx, "agentmem.message_words") }
	for _, step := range []struct{ name, sql string }{
		{"deleting three messages", `delete from agentmem.messages where session_id = $1 and seq in (5, 6, 7)`},
		{"rewriting a message", `update agentmem.messages set content = 'note rewritten' where session_id = $1 and seq = 9`},
	} {
		before := reads()
		exec(step.sql, sid)
		// Three messages of two words, and the scope's totals: a lock, an update and a delete
		// of each count at most.
		if n := reads() - before; n > 40 {
			t.Errorf("%s read %d word counts of a scope of %d words, want 40 or fewer", step.name, n, counted)
		}
	}
	exec(`reset role`)
	var n int
	if err := tx.QueryRow(ctx, messageWordsDriftSQL).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("after deleting and rewriting: %d word counts differ from the stored messages'", n)
	}
}

// insertTalk stores messages of user (agent "chat") as the superuser: texts[i] said by names[i]
// in session sessions[i], perSession to a session, in order.
func insertTalk(t *testing.T, conn *pgx.Conn, user string, perSession int, sessions, texts, names []string) {
	t.Helper()
	if _, err := conn.Exec(t.Context(), `insert into agentmem.sessions (id, user_id, agent, last_seq, expires_at)
		select distinct s, $2, 'chat', $3::bigint, now() + interval '1 hour' from unnest($1::uuid[]) s`, sessions, user, perSession); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), `insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, name, token_estimate, expires_at)
		select x.sid, (x.ord - 1) % $5::bigint + 1, gen_random_uuid(), $2, 'chat', 'user', x.content, x.name, 5, now() + interval '1 hour'
		from unnest($1::uuid[], $3::text[], $4::text[]) with ordinality x(sid, content, name, ord)`, sessions, user, texts, names, perSession); err != nil {
		t.Fatal(err)
	}
}

// rankedKeys runs sql, whose rows are a message's key and its score, and returns them as
// "key score", the score to its last bit (the shortest text that reads back as the same float).
func rankedKeys(tx pgx.Tx, sql string, args ...any) ([]string, error) {
	rows, err := tx.Query(context.Background(), sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (string, error) {
		var key string
		var score float64
		err := row.Scan(&key, &score)
		return key + " " + strconv.FormatFloat(score, 'g', -1, 64), err
	})
}
