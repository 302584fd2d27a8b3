package store_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
)

// bm25 is the score of one document for a query, as the functions compute it: each query
// term in the document weighs ln(1 + (N - df + 0.5) / (df + 0.5)) x tf (k1 + 1) /
// (tf + k1 (1 - b + b dl / avgdl)), with k1 1.2 and b 0.75. tf maps a term to its count in
// the document (for a message, 1: its presence), df to the number of the scope's documents
// holding it.
func bm25(tf, df map[string]float64, n, dl, avgdl float64) float64 {
	var s float64
	for term, f := range tf {
		idf := math.Log(1 + (n-df[term]+0.5)/(df[term]+0.5))
		s += idf * f * 2.2 / (f + 1.2*(0.25+0.75*dl/avgdl))
	}
	return s
}

// Full-text recall ranks by BM25 with the statistics of the caller's scope: a word that most
// of the user's messages hold (a participant's name) weighs little beside a rare one, and the
// scores are exactly BM25's over the user's unexpired rows.
func TestRecallTextRanksByBM25(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{FollowWeight: -1})
	ctx := context.Background()
	user := uuid.New()
	sc := memory.Scope{UserID: user.String(), Agent: "chat"}
	// "john" is in four of the five messages; "clarinet" in one.
	commitMessages(t, e.st, sc, uuid.New(), []memory.NewMessage{
		msg(memory.RoleUser, "Way to go, John!"),
		msg(memory.RoleAssistant, "Thanks John, that means a lot John"),
		msg(memory.RoleUser, "John, the weather is nice today"),
		msg(memory.RoleAssistant, "I have played the clarinet since school"),
		msg(memory.RoleUser, "John said hello"),
	})
	hits, err := recall(e.st, ctx, store.RecallParams{Scope: sc, Source: memory.SourceMessages, Query: "Does John play the clarinet?", Mode: memory.ModeText, K: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 5 || hits[0].Content != "I have played the clarinet since school" {
		t.Fatalf("hits %v, want the clarinet message first of 5", contents(hits))
	}
	// The expected scores, from the lexemes PostgreSQL gives each text.
	terms := map[string]bool{"john": true, "play": true, "clarinet": true}
	type doc struct {
		tf map[string]float64
		dl float64
	}
	docs := map[string]doc{}
	df := map[string]float64{}
	var total float64
	for _, h := range hits {
		rows, err := e.conn.Query(ctx, `select lexeme, coalesce(array_length(positions, 1), 1)
			from unnest(to_tsvector('english', $1))`, h.Content)
		if err != nil {
			t.Fatal(err)
		}
		d := doc{tf: map[string]float64{}}
		for rows.Next() {
			var lex string
			var n float64
			if err := rows.Scan(&lex, &n); err != nil {
				t.Fatal(err)
			}
			d.dl++
			if terms[lex] {
				d.tf[lex] = min(n, 1) // a message's term frequency is the word's presence
				df[lex]++
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		docs[h.Content] = d
		total += d.dl
	}
	for _, h := range hits {
		d := docs[h.Content]
		want := bm25(d.tf, df, 5, d.dl, total/5)
		if math.Abs(h.Score-want) > 1e-9 {
			t.Errorf("score of %q: %v, want BM25's %v", h.Content, h.Score, want)
		}
	}
	// A large scope (through the indexes) scores exactly as a small one (row by row).
	for _, exact := range []bool{true, false} {
		var n int
		var top float64
		err := asRole(t, e.conn, store.CallerRole, map[string]any{"role": "authenticated", "sub": user.String()}, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `select count(*), max(score) from agentmem.message_bm25_hits($1, '', 'chat', '{}', '', '', null, null,
			agentmem.query_terms('Does John play the clarinet?'), 10, $2, 0)`, user, exact).Scan(&n, &top)
		})
		if err != nil {
			t.Fatal(err)
		}
		if n != 5 || math.Abs(top-hits[0].Score) > 1e-9 {
			t.Errorf("exact %v: %d hits, best %v; want 5, %v", exact, n, top, hits[0].Score)
		}
	}
}

// One user's ranking reveals nothing of another user's words: the statistics are the
// caller's own, so another user's rows (of the same words, or of the same tenant) change
// neither the order nor the scores, and expired rows of the caller count no more.
func TestBM25StatisticsAreTheCallersOwn(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	user, other := uuid.New(), uuid.New()
	sc := memory.Scope{UserID: user.String(), TenantID: "acme", Agent: "chat"}
	commitMessages(t, e.st, sc, uuid.New(), []memory.NewMessage{
		msg(memory.RoleUser, "The quarterly budget review is on Monday"),
		msg(memory.RoleAssistant, "I moved the budget meeting to the large room"),
		msg(memory.RoleUser, "Remember that the review needs the sales figures"),
	}, "The budget review happens every quarter", "Sales figures come from the finance team")
	queries := []string{"budget review", "sales figures for the review", "large meeting room"}
	snapshot := func() string {
		t.Helper()
		var out string
		for _, q := range queries {
			for _, src := range []string{memory.SourceMemories, memory.SourceMessages, memory.SourceAll} {
				hits, err := recall(e.st, ctx, store.RecallParams{Scope: sc, Source: src, Query: q, Mode: memory.ModeText, K: 10})
				if err != nil {
					t.Fatal(err)
				}
				out += fmt.Sprintf("%s/%s:", q, src)
				for _, h := range hits {
					out += fmt.Sprintf(" %q=%.12f", h.Content, h.Score)
				}
				out += "\n"
			}
		}
		return out
	}
	before := snapshot()
	// Another user of the same tenant, and the same user in another tenant, write the query's
	// words many times over; the caller's own rows that expired hold them too.
	for _, o := range []memory.Scope{{UserID: other.String(), TenantID: "acme", Agent: "chat"}, {UserID: user.String(), TenantID: "globex", Agent: "chat"}} {
		for i := 0; i < 3; i++ {
			commitMessages(t, e.st, o, uuid.New(), []memory.NewMessage{
				msg(memory.RoleUser, "budget budget review review sales figures large room"),
				msg(memory.RoleAssistant, "budget review"),
			}, fmt.Sprintf("budget review sales figures %d", i))
		}
	}
	expired := commitMessages(t, e.st, sc, uuid.New(), []memory.NewMessage{msg(memory.RoleUser, "budget review budget review")}, "an old budget review")
	if _, err := e.conn.Exec(ctx, `update agentmem.messages set expires_at = now() - interval '1 second' where session_id = $1`, expired.SessionID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.conn.Exec(ctx, `update agentmem.memories set expires_at = now() - interval '1 second' where content = 'an old budget review'`); err != nil {
		t.Fatal(err)
	}
	if after := snapshot(); after != before {
		t.Errorf("the caller's ranking changed with rows it cannot read:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// A message's speaker (its name) is searchable: a question naming a participant finds what
// they said, though their words never name them, ahead of another speaker's question to them.
func TestRecallFindsASpeakerByName(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	sc := memory.Scope{UserID: uuid.NewString(), Agent: "chat"}
	named := func(role, name, content string) memory.NewMessage {
		m := msg(role, content)
		m.Name = &name
		return m
	}
	commitMessages(t, e.st, sc, uuid.New(), []memory.NewMessage{
		named(memory.RoleUser, "Caroline", "What instruments do you play these days?"),
		named(memory.RoleAssistant, "Melanie", "The violin, and a little clarinet on weekends"),
		named(memory.RoleUser, "Caroline", "I went hiking with my dog"),
	})
	hits, err := recall(e.st, ctx, store.RecallParams{Scope: sc, Source: memory.SourceMessages, Query: "Melanie violin", Mode: memory.ModeText, K: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Content != "The violin, and a little clarinet on weekends" {
		t.Fatalf("hits %v, want Melanie's message alone", contents(hits))
	}
	hits, err = recall(e.st, ctx, store.RecallParams{Scope: sc, Source: memory.SourceMessages, Query: "What does Melanie play?", Mode: memory.ModeText, K: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Content != "The violin, and a little clarinet on weekends" {
		t.Fatalf("hits %v, want Melanie's message first", contents(hits))
	}
}

// The answering-turn credit is, for every hit, its own BM25 score plus FollowWeight times the
// score of the turn just before it when that turn is a question, and of the turn just after it
// when neither is a question: nothing from a turn two away, another session's turn, or a turn
// that does not match. It is checked against the scores without credit on a conversation
// where most turns match the question, as the exact path and the index-served path rank it.
func TestAnsweringTurnCreditIsTheNeighboursScore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, limit := range []int{10000, 2} {
		t.Run(fmt.Sprintf("exact limit %d", limit), func(t *testing.T) {
			t.Parallel()
			plain := newRankEnv(t, store.Ranking{FollowWeight: -1, ExactLimit: limit})
			credited := storetest.OpenURL(t, plain.url, storetest.MaxConns(2), storetest.Ranking(store.Ranking{FollowWeight: 0.5, ExactLimit: limit}))
			sc := memory.Scope{UserID: "user_credit", Agent: "chat"}
			sessions := []uuid.UUID{uuid.New(), uuid.New()}
			turns := [][]string{
				{"Did Mia ever play the cello?", "Yes, Mia played the cello for years.", "The cello was old.",
					"Mia sold the cello last spring.", "Why did Mia sell the cello?", "Mia wanted a piano instead.",
					"Nice weather today.", "Mia loves the cello still."},
				{"Mia said the cello needs strings.", "Where does Mia buy cello strings?", "A shop near Mia's school sells cello strings.",
					"Good to know.", "Mia plays the cello on Fridays."},
			}
			for s, texts := range turns {
				var msgs []memory.NewMessage
				for i, text := range texts {
					role := memory.RoleUser
					if i%2 == 1 {
						role = memory.RoleAssistant
					}
					msgs = append(msgs, msg(role, text))
				}
				commitMessages(t, plain.st, sc, sessions[s], msgs)
			}
			p := store.RecallParams{Scope: sc, Source: memory.SourceMessages, Query: "Does Mia play the cello?", Mode: memory.ModeText, K: 20}
			base, err := recall(plain.st, ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := recall(credited, ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			type at struct {
				session string
				seq     int64
			}
			score := map[at]float64{}
			question := map[at]bool{}
			for _, h := range base {
				k := at{h.SessionID.String(), *h.Seq}
				score[k] = h.Score
				question[k] = strings.HasSuffix(h.Content, "?")
			}
			if len(base) < 10 || len(got) != len(base) {
				t.Fatalf("%d hits without credit and %d with it, want the same number, at least 10", len(base), len(got))
			}
			for _, h := range got {
				k := at{h.SessionID.String(), *h.Seq}
				want := score[k]
				before, after := at{k.session, k.seq - 1}, at{k.session, k.seq + 1}
				if question[before] {
					want += 0.5 * score[before]
				}
				if _, ok := score[after]; ok && !question[k] && !question[after] {
					want += 0.5 * score[after]
				}
				if math.Abs(h.Score-want) > 1e-9 {
					t.Errorf("%q: score %.9f, want %.9f (its own %.9f and its neighbours')", h.Content, h.Score, want, score[k])
				}
			}
		})
	}
}

// Every word of a question weighs as BM25 says, whatever the question's length: a short
// question's words are scored one expression a word, a long one's (more than eight words) by a
// subquery over them. Both score as a reference computed here from each message's lexemes (a
// word in the speaker's name three times over), and as each other to the last bit.
func TestBM25WeighsEveryWordOfAQuestionOfAnyLength(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{FollowWeight: -1})
	ctx := context.Background()
	sc := memory.Scope{UserID: uuid.NewString(), Agent: "chat"}
	named := func(role, name, content string) memory.NewMessage {
		m := msg(role, content)
		if name != "" {
			m.Name = &name
		}
		return m
	}
	sid := uuid.New()
	commitMessages(t, e.st, sc, sid, []memory.NewMessage{
		named(memory.RoleUser, "Caroline", "Melanie, did you paint the garden fence or the kitchen?"),
		named(memory.RoleAssistant, "Melanie", "The fence, with blue paint from the hardware store"),
		named(memory.RoleUser, "Caroline", "My violin teacher moved to Boston in March"),
		named(memory.RoleAssistant, "Melanie", "Boston is far; will you find another violin teacher?"),
		named(memory.RoleUser, "", "Camping by the lake with the kids was the best week of summer"),
		named(memory.RoleAssistant, "Melanie", "Caroline, the lake trip sounds lovely; the kids must have loved the canoe"),
		named(memory.RoleUser, "Caroline", "The adoption agency called about the interview next Tuesday"),
		named(memory.RoleAssistant, "Melanie", "Good luck with the agency interview, Caroline"),
		named(memory.RoleUser, "Caroline", "Melanie"),
		named(memory.RoleAssistant, "", "Pottery class on Thursday: I made a bowl and a vase"),
	})
	// The reference: the scope's messages' lexemes, and which of them are in the name (weight A).
	type doc struct {
		content string
		lexemes map[string]bool // in the name
	}
	var docs []doc
	rows, err := e.conn.Query(ctx, `select m.content, u.lexeme, 'A' = any (u.weights)
		from agentmem.messages m, unnest(m.fts) u where m.session_id = $1 order by m.seq`, sid)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var content, lexeme string
		var inName bool
		if err := rows.Scan(&content, &lexeme, &inName); err != nil {
			t.Fatal(err)
		}
		if len(docs) == 0 || docs[len(docs)-1].content != content {
			docs = append(docs, doc{content: content, lexemes: map[string]bool{}})
		}
		docs[len(docs)-1].lexemes[lexeme] = inName
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var total float64
	for _, d := range docs {
		total += float64(len(d.lexemes))
	}
	lengths := map[int]bool{}
	turnsBeside := 0 // rows compared that the first word alone does not match: read beside a match
	for _, q := range []string{
		"What did Melanie paint?",
		"Did Caroline find a violin teacher in Boston or camp by the lake?",
		"Did Caroline find a violin teacher in Boston or camp by the lake with the kids?",
		"Did Caroline find a violin teacher in Boston, camp by the lake and paint the fence?",
		"Melanie Caroline violin teacher Boston lake kids canoe adoption agency interview pottery bowl vase fence",
	} {
		var terms []string
		if err := e.conn.QueryRow(ctx, `select agentmem.query_terms($1)`, q).Scan(&terms); err != nil {
			t.Fatal(err)
		}
		lengths[len(terms)] = true
		df := map[string]float64{}
		for _, d := range docs {
			for _, term := range terms {
				if _, ok := d.lexemes[term]; ok {
					df[term]++
				}
			}
		}
		want := map[string]float64{}
		for _, d := range docs {
			tf := map[string]float64{}
			for _, term := range terms {
				if inName, ok := d.lexemes[term]; ok {
					tf[term] = 1
					if inName {
						tf[term] = 3
					}
				}
			}
			if len(tf) > 0 {
				want[d.content] = bm25(tf, df, float64(len(docs)), float64(len(d.lexemes)), total/float64(len(docs)))
			}
		}
		hits, err := recall(e.st, ctx, store.RecallParams{Scope: sc, Source: memory.SourceMessages, Query: q, Mode: memory.ModeText, K: 20})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != len(want) {
			t.Errorf("%q (%d words): %d hits, want the %d messages holding a word", q, len(terms), len(hits), len(want))
		}
		for _, h := range hits {
			if w, ok := want[h.Content]; !ok || math.Abs(h.Score-w) > 1e-9 {
				t.Errorf("%q (%d words): %q scores %.12f, want %.12f", q, len(terms), h.Content, h.Score, w)
			}
		}
		// Bit for bit: the scores of one expression a word against the subquery's (the same
		// arrays, one null word longer), with and without the turns beside the matches.
		err = asRole(t, e.conn, store.CallerRole, map[string]any{"role": "authenticated", "sub": sc.UserID}, func(tx pgx.Tx) error {
			for _, reach := range []int{0, 2} {
				for _, fw := range []float64{0, 0.5} {
					var differ, rows, beside int
					if err := tx.QueryRow(ctx, bm25WaysSQL, sc.UserID, terms, reach, fw).Scan(&differ, &rows, &beside); err != nil {
						return err
					}
					if differ != 0 || rows == 0 || reach == 0 && rows != len(want) {
						t.Errorf("%q (%d words), reach %d, follow %v: %d of %d rows score otherwise through the subquery, want 0 (and %d rows without reach)",
							q, len(terms), reach, fw, differ, rows, len(want))
					}
					turnsBeside += beside
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if !lengths[8] || !lengths[9] {
		t.Errorf("the questions have %v words: want one of eight and one of nine, the longest scored each way", lengths)
	}
	if turnsBeside == 0 {
		t.Error("no turn beside a match was scored: the comparison never reached them")
	}
}

// bm25ArraysSQL is the CTE w of the arrays agentmem.message_bm25_hits passes to
// agentmem.message_bm25_scored for the words $2 (in their order) of the scope $1, agent chat:
// each word's tsquery, its tsquery in the name, its weight from the scope's statistics, and the
// average length.
const bm25ArraysSQL = `with s as (select * from agentmem.message_word_stats($1, '', 'chat', $2::text[])),
w as (
  select array_agg(quote_literal(u.t)::tsquery order by u.k) as tqs,
         array_agg((quote_literal(u.t) || ':A')::tsquery order by u.k) as tqas,
         array_agg(ln(1 + (s.docs - s.dfs[u.k] + 0.5) / (s.dfs[u.k] + 0.5)) order by u.k) as idfs,
         max(s.avgdl) as avgdl
  from s, unnest($2::text[]) with ordinality u(t, k)
)`

// bm25WaysSQL scores the scope's ($1, agent chat) messages holding a word of $2 through
// agentmem.message_bm25_scored (reach $3, follow weight $4) twice: with the words' arrays, and
// with them one null word longer, which a question of nine words or more, and so the subquery,
// scores. With reach, the candidates are the first word's matches (as a first pass's are the
// rare words'), and the turns beside them are scored too. It answers how many rows differ in
// the bits of their score or relevance, how many there are, and how many of them the first word
// does not match.
const bm25WaysSQL = bm25ArraysSQL + `,
a as (
  select w.*, agentmem.terms_query($2) as q,
         case when $3 > 0 then agentmem.terms_query(($2::text[])[1:1]) else agentmem.terms_query($2) end as q_cand
  from w
),
x as (select h.* from a, agentmem.message_bm25_scored($1, '', 'chat', '{}', '', '', null, null,
  a.q, a.q_cand, $3, a.tqs, a.tqas, a.idfs, a.avgdl, 10, 100, $4) h),
y as (select h.* from a, agentmem.message_bm25_scored($1, '', 'chat', '{}', '', '', null, null,
  a.q, a.q_cand, $3, a.tqs || null::tsquery, a.tqas || null::tsquery, a.idfs || null::float8, a.avgdl, 10, 100, $4) h)
select count(*) filter (where float8send(x.score) is distinct from float8send(y.score)
                          or float8send(x.relevance) is distinct from float8send(y.relevance)),
       count(*),
       count(*) filter (where not m.fts @@ (select agentmem.terms_query(($2::text[])[1:1])))
from x full join y using (session_id, seq)
  left join agentmem.messages m on m.session_id = coalesce(x.session_id, y.session_id) and m.seq = coalesce(x.seq, y.seq)`

// The pass that reads the turns beside its matches reads only the turns that can rank: for any
// n, its answer is the first n of every candidate (the first word's matches and the turns
// beside them), each scored with its neighbours' credit as scoring all of the question's
// matches scores it: the same rows with the same scores, to the last bit. The first word is
// common and another rare, so that turns beside its matches rank; its matches fall everywhere a
// bound reads a neighbour from: at a session's first and last turn, next to each other, two
// turns apart (one turn between them, beside both) and further.
func TestMessageBM25BoundsKeepEveryTurnThatCanRank(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	sc := memory.Scope{UserID: uuid.NewString(), Agent: "chat"}
	r := rand.New(rand.NewPCG(29, 11))
	filler := []string{"harbour", "lantern", "meadow", "copper", "orchard", "velvet", "walnut", "pebble"}
	gaps := map[int]int{} // gaps between the first word's matches in a session: how many
	firsts, lasts := 0, 0 // sessions whose first, and last, turn is a match of the first word
	for s := range 24 {
		var msgs []memory.NewMessage
		last := -1
		turns := 10 + r.IntN(8)
		for i := range turns {
			var words []string
			named := r.IntN(4) == 0
			if !named && (i == 0 && s%2 == 0 || i == turns-1 && s%3 == 0 || r.IntN(5) < 3) {
				words = append(words, "zanzibar")
				if last >= 0 {
					gaps[i-last]++
				}
				last = i
				if i == 0 {
					firsts++
				}
				if i == turns-1 {
					lasts++
				}
			}
			if r.IntN(5) < 2 {
				words = append(words, "trip")
			}
			if r.IntN(8) == 0 {
				words = append(words, "ferry")
			}
			words = append(words, filler[:r.IntN(len(filler))]...)
			text := strings.Join(words, " ")
			if r.IntN(3) == 0 {
				text += "?"
			}
			if text == "" {
				text = "ok"
			}
			m := msg([]string{memory.RoleUser, memory.RoleAssistant}[i%2], text)
			if named {
				// a rare word in the name: a score near the most a turn can have, so that a
				// bound too low would leave it out
				name := "Ferry"
				m.Name = &name
			}
			msgs = append(msgs, m)
		}
		commitMessages(t, e.st, sc, uuid.New(), msgs)
	}
	for _, g := range []int{1, 2, 3} {
		if gaps[g] == 0 {
			t.Fatalf("no two of the first word's matches %d turns apart (gaps %v): the bounds beside them are not checked", g, gaps)
		}
	}
	if firsts == 0 || lasts == 0 {
		t.Fatalf("%d sessions open with a match of the first word and %d close with one: want some of each", firsts, lasts)
	}
	// $5: the pass of a first pass (reach 2, the candidates the first word's matches and the
	// turns beside them), or every match of the question scored (reach 0) and kept where the
	// first word is within a turn; $6 and $7, when given, the words' weights and the average
	// length in place of the scope's.
	const scored = bm25ArraysSQL + `,
	a as (select w.tqs, w.tqas, coalesce($6::float8[], w.idfs) as idfs, coalesce($7::float8, w.avgdl) as avgdl from w)
	select h.session_id::text || '/' || h.seq || ' ' || encode(float8send(h.score), 'hex') || ' ' || encode(float8send(h.relevance), 'hex')
	from a, agentmem.message_bm25_scored($1, '', 'chat', '{}', '', '', null, null, agentmem.terms_query($2),
	  case when $5 then agentmem.terms_query(($2::text[])[1:1]) else agentmem.terms_query($2) end, case when $5 then 2 else 0 end,
	  a.tqs, a.tqas, a.idfs, a.avgdl, 10, $3, $4) h
	where $5 or exists (select 1 from agentmem.messages m
	                    where m.user_id = $1 and m.session_id = h.session_id and m.seq between h.seq - 1 and h.seq + 1
	                      and m.fts @@ agentmem.terms_query(($2::text[])[1:1]))
	order by h.score desc, h.session_id, h.seq`
	terms := []string{"zanzibar", "ferri", "trip"}
	// check compares the pass with every candidate scored, for user, at each follow weight and
	// each n up to maxN, and answers every candidate at each weight.
	check := func(user string, idfs []float64, avgdl *float64, fws []float64, maxN int) [][]string {
		t.Helper()
		var alls [][]string
		err := asRole(t, e.conn, store.CallerRole, map[string]any{"role": "authenticated", "sub": user}, func(tx pgx.Tx) error {
			answer := func(n int, fw float64, pass bool) ([]string, error) {
				rows, err := tx.Query(ctx, scored, user, terms, n, fw, pass, idfs, avgdl)
				if err != nil {
					return nil, err
				}
				return pgx.CollectRows(rows, pgx.RowTo[string])
			}
			for _, fw := range fws {
				all, err := answer(100000, fw, false)
				if err != nil {
					return err
				}
				if len(all) < maxN {
					t.Fatalf("follow %v: %d candidates, want at least %d", fw, len(all), maxN)
				}
				for n := 1; n <= maxN; n++ {
					got, err := answer(n, fw, true)
					if err != nil {
						return err
					}
					if !slices.Equal(got, all[:n]) {
						t.Errorf("follow %v, n %d:\n got %v\nwant %v", fw, n, got, all[:n])
					}
				}
				alls = append(alls, all)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return alls
	}
	beside := 0 // answers' rows the first word does not match
	for i, all := range check(sc.UserID, nil, nil, []float64{0.5, 1, 3, 0}, 20) {
		if len(all) < 40 {
			t.Fatalf("follow weight %d: %d candidates, want at least 40", i, len(all))
		}
		var k int
		if err := e.conn.QueryRow(ctx, `select count(*) from agentmem.messages m
			where m.user_id = $1 and (m.session_id::text || '/' || m.seq) = any ($2::text[])
			  and not m.fts @@ 'zanzibar'::tsquery`, sc.UserID, rowKeys(all[:12])).Scan(&k); err != nil {
			t.Fatal(err)
		}
		beside += k
	}
	if beside == 0 {
		t.Error("no turn beside a match of the first word ranks: the bounds of those turns are not checked")
	}
	// The turn after a match (a question, or not) whose next turn holds another word of the
	// question: that turn's credit is unknown to the bound (a bound taking 0 for it would leave
	// the turn between out), with weights that make the bound tight.
	other := memory.Scope{UserID: uuid.NewString(), Agent: "chat"}
	commitMessages(t, e.st, other, uuid.New(), []memory.NewMessage{
		msg(memory.RoleUser, "zanzibar"), msg(memory.RoleAssistant, "trip"), msg(memory.RoleUser, "ferry")})
	commitMessages(t, e.st, other, uuid.New(), []memory.NewMessage{
		msg(memory.RoleUser, "zanzibar?"), msg(memory.RoleAssistant, "trip"), msg(memory.RoleUser, "ferry")})
	// two matches in a row: a floor that credits one with the other, a bar a bound too low misses
	commitMessages(t, e.st, other, uuid.New(), []memory.NewMessage{
		msg(memory.RoleUser, "zanzibar"), msg(memory.RoleAssistant, "zanzibar")})
	one := 1.0
	check(other.UserID, []float64{10, 4, 0.5}, &one, []float64{0.5, 1, 3}, 3)
}

// rowKeys is the session/seq of each row of answers of "session/seq score relevance".
func rowKeys(rows []string) []string {
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i], _, _ = strings.Cut(r, " ")
	}
	return keys
}

// TestAQuestionIsToldByItsLastByte: BM25 over messages tells a question by the last byte of its
// text's bytes (the server's own), trailing spaces trimmed (agentmem.message_word_matches, and
// the turns agentmem.message_bm25_scored reads beside its matches); the same turns are
// questions as by the last character of the text trimmed of its trailing spaces, in texts of
// every kind.
func TestAQuestionIsToldByItsLastByte(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	sc := memory.Scope{UserID: uuid.NewString(), Agent: "chat"}
	endings := []string{"?", "? ", "?   ", "?\t", "?\n", "? x", "?x", ". ", "", " ?", "¿qué?", "¿qué? ",
		"ä?", "日本語?", "日本語？", "?\u00a0", "?\u3000", "🙂?", "?🙂", "??", "? ?", "?.", "\u00bf"}
	var msgs []memory.NewMessage
	for _, end := range endings {
		msgs = append(msgs, msg(memory.RoleUser, "zanzibar "+end))
	}
	// texts of no characters, or of spaces alone, matched by the speaker's name
	for _, text := range []string{"", "   "} {
		m := msg(memory.RoleUser, text)
		name := "Zanzibar"
		m.Name = &name
		msgs = append(msgs, m)
	}
	session := uuid.New()
	commitMessages(t, e.st, sc, session, msgs)
	var questions int
	err := asRole(t, e.conn, store.CallerRole, map[string]any{"role": "authenticated", "sub": sc.UserID}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			select m.content, w.question, pg_catalog.right(pg_catalog.rtrim(m.content), 1) = '?'
			from agentmem.message_word_matches($1, '', 'chat', 'zanzibar'::tsquery) w
			  join agentmem.messages m on m.session_id = w.session_id and m.seq = w.seq
			order by w.seq`, sc.UserID)
		if err != nil {
			return err
		}
		n := 0
		for rows.Next() {
			var content string
			var got, want bool
			if err := rows.Scan(&content, &got, &want); err != nil {
				return err
			}
			n++
			if got != want {
				t.Errorf("%q: a question %v, want %v", content, got, want)
			}
			if want {
				questions++
			}
		}
		if n != len(msgs) {
			t.Errorf("%d matches, want %d", n, len(msgs))
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if questions < 5 || questions > len(endings)-5 {
		t.Fatalf("%d questions of %d texts: want both kinds", questions, len(endings))
	}
	// The turns read beside the matches (agentmem.message_bm25_scored reads them by their keys):
	// a question before a match credits the match with the question's score, and a statement
	// does not. Each session: a turn of the second word ending as above, then a turn of the
	// first word, the same in every session.
	other := memory.Scope{UserID: uuid.NewString(), Agent: "chat"}
	sessions := make([]uuid.UUID, len(endings))
	for i, end := range endings {
		sessions[i] = uuid.New()
		commitMessages(t, e.st, other, sessions[i], []memory.NewMessage{
			msg(memory.RoleUser, "trip "+end), msg(memory.RoleAssistant, "ferry lantern")})
	}
	err = asRole(t, e.conn, store.CallerRole, map[string]any{"role": "authenticated", "sub": other.UserID}, func(tx pgx.Tx) error {
		// the first word's matches (the answers), and the turns before them read by their keys;
		// each answer's score, and whether the turn before it is a question as the characters
		// tell
		const pass = bm25ArraysSQL + `
		select h.session_id, h.score, pg_catalog.right(pg_catalog.rtrim(m.content), 1) = '?'
		from w, agentmem.message_bm25_scored($1, '', 'chat', '{}', '', '', null, null, agentmem.terms_query($2),
		  agentmem.terms_query(($2::text[])[1:1]), 2, w.tqs, w.tqas, w.idfs, w.avgdl, 10, 1000, 1) h
		  join agentmem.messages m on m.session_id = h.session_id and m.seq = 1
		where h.seq = 2`
		rows, err := tx.Query(ctx, pass, other.UserID, []string{"ferri", "trip"})
		if err != nil {
			return err
		}
		type answer struct {
			score    float64
			question bool
		}
		answers := map[uuid.UUID]answer{}
		base := math.Inf(1) // the least score: an answer after a statement
		for rows.Next() {
			var session uuid.UUID
			var a answer
			if err := rows.Scan(&session, &a.score, &a.question); err != nil {
				return err
			}
			answers[session] = a
			base = min(base, a.score)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(answers) != len(endings) {
			t.Fatalf("%d answers, want %d", len(answers), len(endings))
		}
		for i, end := range endings {
			a := answers[sessions[i]]
			if credited := a.score > base; credited != a.question {
				t.Errorf("the answer after %q scores %v (after a statement %v): credited %v, want %v",
					"trip "+end, a.score, base, credited, a.question)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
