package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	pgvector "github.com/pgvector/pgvector-go"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// wordsQueries and wordsWarmup are how many questions the words workload asks of each of its
// four configurations (at most; no more than Sizes.Queries), after how many unmeasured ones.
const (
	wordsQueries = 200
	wordsWarmup  = 20
)

// runWords measures recall over messages for one user of sz.WordsMessages messages in
// which the commonest word of every question (a speaker's name) is in three quarters of the
// messages, among other users' messages and memories that share the tables and indexes: the
// case where ranking by word weights must score most of the user's messages unless it prunes.
// The rows carry vectors of the built-in embedder (what a deployment without a model ranks
// with); recall runs at the store level in text and hybrid mode, with the default exact limit
// (the user's scope is larger: index-served) and with one above the user's messages (exact),
// the four asked in turn, question by question.
func runWords(ctx context.Context, cfg Config, db *benchDB, sz bench.Sizes) (*bench.RecallWords, error) {
	t0 := time.Now()
	emb := embedding.Hash{}
	msgs := bench.WordsMessages(bench.Stream(bench.StreamWords), sz.WordsMessages)
	r := &bench.RecallWords{UserMessages: len(msgs), OtherMessages: wordsOtherMessages(sz),
		OtherMemories: sz.WordsMessages, Embedder: emb.Model()}
	for _, m := range msgs {
		if m.Name == bench.WordsSpeakerA || strings.Contains(m.Text, bench.WordsSpeakerA) {
			r.CommonShare++
		}
	}
	r.CommonShare /= float64(len(msgs))
	if err := loadWords(ctx, db, emb, msgs, r.OtherMessages); err != nil {
		return nil, err
	}
	r.LoadSeconds = time.Since(t0).Seconds()
	cfg.logf("words: loaded in %.1fs", r.LoadSeconds)

	stores := make([]*store.Store, 2)
	for i, limit := range []int{min(store.DefaultRanking.ExactLimit, sz.WordsMessages/2), 2 * sz.WordsMessages} {
		st, err := store.Open(ctx, store.Config{DatabaseURL: db.url, MaxConns: 2, Ranking: store.Ranking{ExactLimit: limit}})
		if err != nil {
			return nil, err
		}
		defer st.Close()
		stores[i] = st
	}
	qr := bench.Stream(bench.StreamWordsQueries)
	queries := min(wordsQueries, sz.Queries)
	questions := make([]string, wordsWarmup+queries)
	for i := range questions {
		questions[i] = bench.WordsQuery(qr, msgs)
	}
	scope := memory.Scope{UserID: bench.WordsUserID.String(), Agent: benchAgent}
	type config struct {
		st   *store.Store
		mode string
	}
	configs := []config{{stores[0], memory.ModeText}, {stores[0], memory.ModeHybrid}, {stores[1], memory.ModeText}, {stores[1], memory.ModeHybrid}}
	ph, err := askInTurn(ctx, questions, len(configs), func(q string, n int) error {
		c := configs[n]
		p, err := withQuery(ctx, emb, store.RecallParams{Scope: scope, Source: memory.SourceMessages, Query: q, K: recallK, Mode: c.mode})
		if err != nil {
			return err
		}
		hits, err := c.st.Recall(ctx, p)
		if err == nil && len(hits) == 0 {
			err = fmt.Errorf("no hit for %q", q)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	r.Queries = queries
	r.Text, r.Hybrid, r.ExactText, r.ExactHybrid = ph[0], ph[1], ph[2], ph[3]
	return r, talkRecall(ctx, stores[0], emb, min(wordsQueries, sz.Queries), r)
}

// talkRecall asks the talk user the questions of its conversations (up to queries, after
// wordsWarmup unmeasured ones) in text, vector and hybrid mode, in turn, and records the
// phases in r.
func talkRecall(ctx context.Context, st *store.Store, emb embedding.Embedder, queries int, r *bench.RecallWords) error {
	var questions []string
	for _, c := range bench.TalkConversations() {
		for _, s := range c.Sessions {
			r.TalkMessages += len(s.Turns)
		}
		for _, q := range c.Questions {
			questions = append(questions, q.Text)
		}
	}
	// Every conversation's questions in turn, not the first conversation's alone.
	rq := bench.Stream(bench.StreamTalk)
	for i := len(questions) - 1; i > 0; i-- {
		j := rq.Int(i + 1)
		questions[i], questions[j] = questions[j], questions[i]
	}
	questions = questions[:min(len(questions), wordsWarmup+queries)]
	modes := []string{memory.ModeText, memory.ModeVector, memory.ModeHybrid}
	scope := memory.Scope{UserID: bench.TalkUserID.String(), Agent: benchAgent}
	ph, err := askInTurn(ctx, questions, len(modes), func(q string, n int) error {
		p, err := withQuery(ctx, emb, store.RecallParams{Scope: scope, Source: memory.SourceMessages, Query: q, K: recallK, Mode: modes[n]})
		if err == nil {
			_, err = st.Recall(ctx, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	r.TalkQueries = max(len(questions)-wordsWarmup, 0)
	r.TalkText, r.TalkVector, r.TalkHybrid = ph[0], ph[1], ph[2]
	return nil
}

// askInTurn asks every question of each of configs configurations, ask(question, configuration),
// the configurations in turn so that each is first as often as the others, and answers a phase
// per configuration of one client, without the first wordsWarmup questions.
func askInTurn(ctx context.Context, questions []string, configs int, ask func(q string, n int) error) ([]bench.Phase, error) {
	lat := make([][]time.Duration, configs)
	elapsed := make([]time.Duration, configs)
	errs := make([]int, configs)
	first := make([]string, configs)
	for i, q := range questions {
		for k := range configs {
			n := (i + k) % configs
			t := time.Now()
			err := ask(q, n)
			d := time.Since(t)
			if i < wordsWarmup {
				continue
			}
			elapsed[n] += d
			if err != nil {
				errs[n]++
				if first[n] == "" {
					first[n] = err.Error()
				}
				continue
			}
			lat[n] = append(lat[n], d)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	measured := max(len(questions)-wordsWarmup, 0)
	ph := make([]bench.Phase, configs)
	for n := range ph {
		ph[n] = phase(1, measured, errs[n], first[n], elapsed[n], lat[n])
	}
	return ph, nil
}

// loadTalk copies the talk user's conversations (bench.TalkConversations) with their vectors:
// a session per conversation's session, its turns in order, dated that day a minute apart,
// each speaker by name, the first speaker's turns as the user's.
func loadTalk(ctx context.Context, conn *pgx.Conn, emb embedding.Hash, expires time.Time) error {
	var turns []wordsRow
	var sessions [][]any
	for c, conv := range bench.TalkConversations() {
		for s, sess := range conv.Sessions {
			day, err := time.Parse(time.DateOnly, sess.Date)
			if err != nil {
				return err
			}
			id := bench.TalkSessionID(c, s)
			sessions = append(sessions, []any{id, bench.TalkUserID, int64(len(sess.Turns)), "", benchAgent, day,
				day.Add(time.Duration(len(sess.Turns)) * time.Minute), expires})
			for t, tr := range sess.Turns {
				role := memory.RoleUser
				if tr.Speaker == 1 {
					role = memory.RoleAssistant
				}
				turns = append(turns, wordsRow{bench.TalkUserID, id, t + 1, role, conv.Speakers[tr.Speaker], tr.Text, day.Add(time.Duration(t) * time.Minute)})
			}
		}
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"agentmem", "sessions"},
		[]string{"id", "user_id", "last_seq", "tenant_id", "agent", "created_at", "last_active_at", "expires_at"},
		pgx.CopyFromRows(sessions)); err != nil {
		return fmt.Errorf("copy the talk user's sessions: %w", err)
	}
	if err := copyMessages(ctx, conn, emb, turns, expires); err != nil {
		return fmt.Errorf("copy the talk user's messages: %w", err)
	}
	return nil
}

// wordsRow is a message the words workload copies: its user, session and place, its speaker,
// text and time.
type wordsRow struct {
	user, session    uuid.UUID
	seq              int
	role, name, text string
	at               time.Time
}

// copyMessages copies rows into agentmem.messages, each with its built-in vector, expiring at
// expires.
func copyMessages(ctx context.Context, conn *pgx.Conn, emb embedding.Hash, rows []wordsRow, expires time.Time) error {
	texts := make([]string, len(rows))
	for i, r := range rows {
		texts[i] = r.text
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return err
	}
	i := 0
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"agentmem", "messages"},
		[]string{"session_id", "seq", "id", "tenant_id", "user_id", "agent", "role", "name", "content", "token_estimate",
			"created_at", "expires_at", "embedding", "embedding_model"},
		pgx.CopyFromFunc(func() ([]any, error) {
			if i >= len(rows) {
				return nil, nil
			}
			r := rows[i]
			row := []any{r.session, int64(r.seq), uuid.New(), "", r.user, benchAgent, r.role, r.name, r.text,
				int32(memory.EstimateTokens(r.text, nil, nil, nil)), r.at, expires, pgvector.NewVector(vecs[i]), emb.Model()}
			i++
			return row, nil
		}))
	return err
}

// loadWords loads the words workload's rows with COPY: the user's messages in sessions of
// bench.WordsPerSession, the other users' messages (drawn after the user's, one conversation
// each), and the other users' memories (texts of the messages stream), every row with its
// built-in vector; then it vacuums, analyzes and prewarms the tables and their indexes.
func loadWords(ctx context.Context, db *benchDB, emb embedding.Hash, user []bench.WordsMessage, others int) error {
	conn, err := db.admin(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	// The HNSW indexes are dropped for the load and made again after it: inserting into them
	// row by row takes minutes.
	rows0, err := conn.Query(ctx, `select indexname, replace(indexdef, ' ON ONLY ', ' ON ') from pg_indexes where schemaname = 'agentmem'
		and tablename in ('memories', 'messages') and indexdef like '%USING hnsw%'`)
	if err != nil {
		return fmt.Errorf("list indexes: %w", err)
	}
	defs := map[string]string{}
	var name, def string
	if _, err := pgx.ForEachRow(rows0, []any{&name, &def}, func() error { defs[name] = def; return nil }); err != nil {
		return fmt.Errorf("list indexes: %w", err)
	}
	for name := range defs {
		if _, err := conn.Exec(ctx, "drop index agentmem."+pgx.Identifier{name}.Sanitize()); err != nil {
			return err
		}
	}
	r := bench.Stream(bench.StreamWords)
	bench.WordsMessages(r, len(user)) // the user's, drawn again: the others' come after them
	perOther := others / bench.WordsOtherUsers
	type owned struct {
		user    uuid.UUID
		session uuid.UUID
		seq     int
		msg     bench.WordsMessage
	}
	var rows []owned
	for i, m := range user {
		rows = append(rows, owned{bench.WordsUserID, bench.WordsSessionID(-1, i/bench.WordsPerSession), i%bench.WordsPerSession + 1, m})
	}
	for u := range bench.WordsOtherUsers {
		for i, m := range bench.WordsMessages(r, perOther) {
			rows = append(rows, owned{bench.WordsOtherUserID(u), bench.WordsSessionID(u, i/bench.WordsPerSession), i%bench.WordsPerSession + 1, m})
		}
	}
	now := time.Now()
	expires := now.Add(retention)
	var sessions [][]any
	for _, o := range rows {
		if o.seq == 1 {
			sessions = append(sessions, []any{o.session, o.user, int64(0), "", benchAgent, now.Add(-time.Hour), now, expires})
		}
		sessions[len(sessions)-1][2] = int64(o.seq)
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"agentmem", "sessions"},
		[]string{"id", "user_id", "last_seq", "tenant_id", "agent", "created_at", "last_active_at", "expires_at"},
		pgx.CopyFromRows(sessions)); err != nil {
		return fmt.Errorf("copy sessions: %w", err)
	}
	msgs := make([]wordsRow, len(rows))
	for i, o := range rows {
		msgs[i] = wordsRow{o.user, o.session, o.seq, bench.Role(o.seq - 1), o.msg.Name, o.msg.Text,
			now.Add(-time.Duration(len(rows)-i) * time.Second)}
	}
	if err := copyMessages(ctx, conn, emb, msgs, expires); err != nil {
		return fmt.Errorf("copy messages: %w", err)
	}
	mems := bench.WordsMessages(r, len(user))
	texts := make([]string, len(mems))
	for i, m := range mems {
		texts[i] = m.Text
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return err
	}
	empty := []byte("{}")
	i := 0
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"agentmem", "memories"},
		[]string{"tenant_id", "user_id", "agent", "content", "content_key", "metadata", "embedding",
			"embedding_model", "created_at", "updated_at", "expires_at"},
		pgx.CopyFromFunc(func() ([]any, error) {
			if i >= len(mems) {
				return nil, nil
			}
			created := now.Add(-time.Duration(len(mems)-i) * time.Second)
			row := []any{"", bench.WordsOtherUserID(i % bench.WordsOtherUsers), "", texts[i], store.ContentKey(texts[i]), empty,
				pgvector.NewVector(vecs[i]), emb.Model(), created, created, expires}
			i++
			return row, nil
		})); err != nil {
		return fmt.Errorf("copy memories: %w", err)
	}
	if err := loadTalk(ctx, conn, emb, expires); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "set maintenance_work_mem = '1GB'"); err != nil {
		return err
	}
	for name, def := range defs {
		if _, err := conn.Exec(ctx, def); err != nil {
			return fmt.Errorf("create %s: %w", name, err)
		}
	}
	if err := settle(ctx, conn, "agentmem.sessions, agentmem.messages, agentmem.memories"); err != nil {
		return err
	}
	return prewarm(ctx, conn, "agentmem.messages", "agentmem.memories", "agentmem.messages_user_fts_idx",
		"agentmem.messages_owner_created_idx", "agentmem.memories_owner_created_idx")
}

// wordsOtherMessages is how many messages the words workload's other users hold.
func wordsOtherMessages(sz bench.Sizes) int { return sz.WordsMessages * 20 / 3 }
