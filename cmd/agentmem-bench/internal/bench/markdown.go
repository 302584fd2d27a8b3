package bench

import (
	"fmt"
	"sort"
	"strings"
)

// Markdown renders the results as a readable report; charts are the PNG files beside it.
func Markdown(r *Results, charts []string) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# agentmem benchmark (%s)\n\n", r.Mode)
	dirty := ""
	if r.Env.Dirty {
		dirty = " (with uncommitted changes)"
	}
	p("%s, commit `%s`%s, %.0f s.\n\n", r.StartedAt.UTC().Format("2006-01-02 15:04 MST"), short(r.Env.Commit), dirty, r.DurationS)
	m := r.Env.Machine
	p("Machine: %d cores (%s), %.1f GiB, %s/%s, load average %.2f at start. Go %s, PostgreSQL %s, pgvector %s; store connects %s.\n\n",
		m.Cores, m.CPUModel, float64(m.MemoryBytes)/(1<<30), m.OS, m.Arch, m.LoadAvg1, r.Env.Go, r.Env.PostgreSQL, r.Env.Pgvector, r.Env.Connection)
	if r.Env.UserPartitions > 1 {
		p("User-owned tables partitioned by user into %d partitions each (USER_PARTITIONS).\n\n", r.Env.UserPartitions)
	}
	if len(r.Env.PGSettings) > 0 {
		keys := make([]string, 0, len(r.Env.PGSettings))
		for k := range r.Env.PGSettings {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s=%s", k, r.Env.PGSettings[k])
		}
		p("PostgreSQL settings: %s.\n\n", strings.Join(parts, ", "))
	}
	if len(r.Goals) > 0 {
		p("## Goals\n\n| Goal | Target | This run | Met |\n|---|---|---|---|\n")
		for _, g := range r.Goals {
			p("| %s | %s | %s %s | %s |\n", g.Name, g.Target, num(g.Value), g.Unit, yesNo(g.Met))
		}
		p("\n")
	}
	comparisonMarkdown(p, r)

	phaseHeader := "| Level | Phase | Clients | Ops | Errors | ops/s | p50 ms | p90 ms | p99 ms | max ms |\n|---|---|---|---|---|---|---|---|---|---|\n"
	phaseRow := func(level, name string, ph Phase) {
		p("| %s | %s | %d | %d | %d | %s | %s | %s | %s | %s |\n", level, name, ph.Clients, ph.Ops, ph.Errors,
			num(ph.OpsPerSec), ms(ph.Latency.P50MS), ms(ph.Latency.P90MS), ms(ph.Latency.P99MS), ms(ph.Latency.MaxMS))
	}
	w := r.Workloads
	if f := w.Floor; f != nil {
		p("## Floor: the simplest database calls from this process\n\n%s", phaseHeader)
		phaseRow("pool", "select 1", f.SelectOne)
		phaseRow("pool", "begin; select 1; commit", f.Transaction)
		p("\n")
	}
	if w.W1 != nil {
		p("## W1 commit-turn (%d turns per phase)\n\n%s", r.Sizes.Turns, phaseHeader)
		eachLevel(w.W1, func(level string, v *W1) {
			phaseRow(level, "sequential", v.Sequential)
			phaseRow(level, "concurrent", v.Concurrent)
		})
		p("\n")
		cpuHeader := false
		eachLevel(w.W1, func(level string, v *W1) {
			for _, c := range []struct {
				phase string
				cost  *CPUCost
			}{{"sequential", v.SequentialCPU}, {"concurrent", v.ConcurrentCPU}} {
				if c.cost == nil {
					continue
				}
				if !cpuHeader {
					p("CPU per 1,000 turns (this process, which holds the store and, at the http level, the server; and the database server's backends of the bench database):\n\n")
					p("| Level | Phase | Turns | process CPU s | server CPU s | total CPU s |\n|---|---|---|---|---|---|\n")
					cpuHeader = true
				}
				p("| %s | %s | %d | %.3f | %.3f | %.3f |\n", level, c.phase, c.cost.Ops, c.cost.ProcessSecondsPer1000,
					c.cost.ServerSecondsPer1000, c.cost.TotalSecondsPer1000)
			}
		})
		if cpuHeader {
			p("\n")
		}
	}
	if w.W2 != nil {
		p("## W2 get-context, last 12 messages (%d reads)\n\n%s", r.Sizes.Reads, phaseHeader)
		eachLevel(w.W2, func(level string, v *W2) { phaseRow(level, "sequential", v.Sequential) })
		p("\n")
	}
	if w.W2Growth != nil {
		p("## W2-growth: get-context vs session length (%d reads per length)\n\n", r.Sizes.GrowthReads)
		p("| Level | Messages in session | Reads | Errors | p50 ms | p99 ms |\n|---|---|---|---|---|---|\n")
		eachLevel(w.W2Growth, func(level string, v *W2Growth) {
			for _, pt := range v.Points {
				p("| %s | %d | %d | %d | %s | %s |\n", level, pt.Length, pt.Phase.Ops, pt.Phase.Errors, ms(pt.Phase.Latency.P50MS), ms(pt.Phase.Latency.P99MS))
			}
		})
		eachLevel(w.W2Growth, func(level string, v *W2Growth) {
			p("\n%s: p50 of the longest sessions / p50 of the shortest = %.2fx", level, v.P50Ratio)
		})
		p("\n\n")
	}
	for _, w3 := range []struct {
		title string
		v     *Levels[W3]
	}{{"W3 recall", w.W3}, {"W3 recall, large", w.W3Large}} {
		if w3.v == nil {
			continue
		}
		var any *W3
		eachLevel(w3.v, func(_ string, v *W3) {
			if any == nil {
				any = v
			}
		})
		if any == nil {
			continue
		}
		p("## %s: %d memories across %d users, top 10, %d queries (mode %s)\n\n", w3.title, any.Memories, any.Users, r.Sizes.Queries, any.Mode)
		p("Loaded and indexed in %.1f s.\n\n%s", any.LoadSeconds, phaseHeader)
		eachLevel(w3.v, func(level string, v *W3) {
			phaseRow(level, "sequential", v.Sequential)
			phaseRow(level, "concurrent", v.Concurrent)
			if v.Hybrid != nil {
				phaseRow(level, "sequential, hybrid mode", *v.Hybrid)
			}
		})
		eachLevel(w3.v, func(level string, v *W3) { p("\n%s: recall@10 = %.4f", level, v.RecallAt10) })
		p("\n\n")
	}
	for _, v := range []*W3Sources{w.W3Sources, w.W3SourcesClustered} {
		if v == nil {
			continue
		}
		kind := v.Vectors
		if kind == "" {
			kind = VectorsRandom
		}
		p("## W3-sources (%s texts): recall by source, one user with %d memories and %d messages, top 10, %d queries (store)\n\n",
			kind, v.Rows, v.Rows, r.Sizes.SourcesQueries)
		if kind == VectorsClustered {
			p("Texts drawn by topic with near-duplicates and paraphrases, so that the vectors cluster as a real embedding model's do. ")
		} else {
			p("Every word drawn from the whole vocabulary, so that the vectors are nearly orthogonal: the worst case for a graph index. ")
		}
		p("Other users hold %d memories and %d messages in the same tables and indexes. Loaded and indexed in %.1f s. "+
			"The three sources are asked in turn, query by query.\n\n%s", v.OtherMemories, v.OtherMessages, v.LoadSeconds, phaseHeader)
		for _, m := range []struct {
			mode string
			ph   SourcePhases
		}{{"hybrid", v.Hybrid}, {"vector", v.Vector}} {
			phaseRow("store", m.mode+", source memories", m.ph.Memories)
			phaseRow("store", m.mode+", source messages", m.ph.Messages)
			phaseRow("store", m.mode+", source all", m.ph.All)
		}
		phaseRow("store", "commit-turn into the user's sessions (vectors at commit)", v.Commits)
		if v.CommitsDeferred.Ops > 0 {
			phaseRow("store", "commit-turn into the user's sessions (vectors after the answer, the default)", v.CommitsDeferred)
		}
		p("\nHybrid p50 over messages / over memories: %.2fx. Vector recall@10 against exact (first %d queries): memories %.4f, messages %.4f.\n\n",
			v.MessagesToMemoriesP50, v.RecallQueries, v.RecallAt10Memories, v.RecallAt10Messages)
	}
	if v := w.Words; v != nil {
		p("## Words: recall over one user's %d messages, questions naming a speaker in %.0f%% of them, top 10, %d queries (store)\n\n",
			v.UserMessages, 100*v.CommonShare, v.Queries)
		p("Other users hold %d messages and %d memories in the same tables and indexes; vectors of %s. Loaded in %.1f s. "+
			"The four configurations are asked in turn, question by question.\n\n%s", v.OtherMessages, v.OtherMemories, v.Embedder, v.LoadSeconds, phaseHeader)
		phaseRow("store", "text, index-served (default exact limit)", v.Text)
		phaseRow("store", "hybrid, index-served (default exact limit)", v.Hybrid)
		phaseRow("store", "text, exact (limit above the user's messages)", v.ExactText)
		phaseRow("store", "hybrid, exact (limit above the user's messages)", v.ExactHybrid)
		if v.TalkMessages > 0 {
			p("\nA user of %d messages of natural conversation (the labelled conversations and as many more), in the same tables, "+
				"asked %d of their questions (default exact limit):\n\n%s", v.TalkMessages, v.TalkQueries, phaseHeader)
			phaseRow("store", "text", v.TalkText)
			phaseRow("store", "vector", v.TalkVector)
			phaseRow("store", "hybrid (default)", v.TalkHybrid)
		}
		p("\n")
	}
	if s := w.W4; s != nil {
		p("## W4 sweep: %d expired + %d live messages\n\n", s.ExpiredRows, s.LiveRows)
		p("Loaded in %.1f s. Swept in %.2f s: %d rows deleted (%d messages, %d sessions, %d memories, %d idempotency keys) in %d batches of up to %d, **%s rows/s**, %d sweep errors.\n\n",
			s.LoadSeconds, s.SweepSeconds, s.RowsDeleted, s.Deleted.Messages, s.Deleted.Sessions, s.Deleted.Memories,
			s.Deleted.IdempotencyKeys, s.Batches, s.BatchSize, num(s.RowsPerSec), s.SweepErrors)
		p("%s", phaseHeader)
		phaseRow("store", "commits without sweep", s.CommitsWithout)
		phaseRow("store", "commits during sweep", s.CommitsDuring)
		p("\nCommit p99 during / without: %.2fx\n\n", s.P99Ratio)
	}
	if v := w.W5; v != nil {
		p("## W5 end to end: %d clients for %.0f s, 80%% get-context / 20%% commit-turn\n\n", v.Clients, v.Seconds)
		p("| Requests | Errors | req/s | p50 ms | p90 ms | p99 ms | get-context p50 / p99 ms | commit-turn p50 / p99 ms |\n|---|---|---|---|---|---|---|---|\n")
		p("| %d | %d | %s | %s | %s | %s | %s / %s | %s / %s |\n\n", v.Requests, v.Errors, num(v.RequestsPerSec),
			ms(v.Latency.P50MS), ms(v.Latency.P90MS), ms(v.Latency.P99MS), ms(v.GetContext.P50MS), ms(v.GetContext.P99MS),
			ms(v.CommitTurn.P50MS), ms(v.CommitTurn.P99MS))
		if v.FirstError != "" {
			p("First error: `%s`\n\n", v.FirstError)
		}
	}
	if v := w.W6; v != nil {
		p("## W6 start-up (median of %d runs; built with `%s`)\n\n", r.Sizes.W6Runs, strings.Join(v.BuildFlags, " "))
		p("| Binary | Started as | Size MiB | Start to ready ms | Start to first answer ms | Peak RSS MiB | Status | Errors |\n|---|---|---|---|---|---|---|---|\n")
		row := func(s Startup, how string) {
			p("| %s | %s | %.1f | %s | %s | %.1f | %d | %d |\n", s.Name, how, float64(s.BinaryBytes)/(1<<20), ms(s.InitMS), ms(s.StartMS), s.PeakRSSKiB/1024, s.Status, s.Errors)
		}
		for _, s := range v.Lambda {
			row(s, "Lambda (Runtime API)")
		}
		if v.Server != nil {
			row(*v.Server, "agentmem serve, /healthz")
		}
		p("\n")
	}
	if q := w.Quality; q != nil {
		p("## Retrieval quality: %d labelled questions over %d facts of %d users (store, embedder %s, top %d)\n\n",
			q.Hybrid.Questions, q.Facts, q.Users, q.Embedder, q.K)
		p("Each question is labelled with the one fact that answers it. hit@n is the share of questions whose fact ranks in the first n; MRR is the mean of 1/rank, 0 when the fact is not in the top %d. ", q.K)
		p("A fact tied in score with others counts the mean over the places it can take in the tie. The store breaks ties by memory id, which is random, so the set was stored %d times under users of their own and the figures are the mean over the copies.\n\n", q.Copies)
		p("| Mode | Questions | hit@1 | hit@5 | MRR |\n|---|---|---|---|---|\n")
		for _, m := range []struct {
			mode string
			s    QualityScore
		}{{"text", q.Text}, {"vector", q.Vector}, {"hybrid", q.Hybrid}} {
			p("| %s | %d | %.3f | %.3f | %.3f |\n", m.mode, m.s.Questions, m.s.HitAt1, m.s.HitAt5, m.s.MRR)
		}
		p("\n%s", MatchingMarkdown("labelled facts", q.Matching))
		if cq := q.Conversations; cq != nil {
			p("%s", ConversationMarkdown(cq))
			p("%s", MatchingMarkdown("conversations", cq.Matching))
		}
	}
	if w.History != nil {
		var any *History
		eachLevel(w.History, func(_ string, v *History) {
			if any == nil {
				any = v
			}
		})
		if any != nil {
			p("## History across sessions: one user, %d messages in %d sessions of %d agents (%d reads of each page)\n\n",
				any.Messages, any.Sessions, any.Agents, r.Sizes.HistoryReads)
			p("Loaded in %.1f s. Every page holds 50 messages and the total.\n\n%s", any.LoadSeconds, phaseHeader)
			eachLevel(w.History, func(level string, v *History) {
				phaseRow(level, "first page, newest", v.FirstPage)
				phaseRow(level, "deep page (older half), newest", v.DeepPage)
				phaseRow(level, "first page of one agent", v.AgentPage)
				phaseRow(level, "first page since the middle, oldest", v.SincePage)
			})
			p("\n| Level | Whole history, pages of 200 | Clear | Deleted | Seconds | Deleted/s |\n|---|---|---|---|---|---|\n")
			eachLevel(w.History, func(level string, v *History) {
				rate := 0.0
				if v.ClearSeconds > 0 {
					rate = float64(v.ClearDeleted) / v.ClearSeconds
				}
				p("| %s | %d pages in %.2f s | %s | %d | %.2f | %s |\n", level, v.WalkPages, v.WalkSeconds, v.ClearScope,
					v.ClearDeleted, v.ClearSeconds, num(rate))
			})
			p("\n")
		}
	}
	if o := w.Outbox; o != nil {
		p("## Outbox: commit-turn with 0 and 1 adapter, delivery delay, an outage of the receiver\n\n")
		p("W1's sequential turns committed through the store with no adapter and with the webhook adapter (one job per turn, written in the commit's transaction), alternating turn by turn; then the same with `synchronous_commit` off, which leaves out the wait for the disk.\n\n%s", phaseHeader)
		phaseRow("store", "no adapter", o.Commit.NoAdapter)
		phaseRow("store", "one adapter", o.Commit.OneAdapter)
		phaseRow("store", "no adapter, synchronous_commit off", o.CommitNoFlushWait.NoAdapter)
		phaseRow("store", "one adapter, synchronous_commit off", o.CommitNoFlushWait.OneAdapter)
		p("\nOne adapter adds **%s ms** to the p50 (median of the paired differences %s ms); with `synchronous_commit` off, **%s ms** (paired %s ms).\n\n",
			ms(o.Commit.AddedP50MS), ms(o.Commit.PairedMedianMS), ms(o.CommitNoFlushWait.AddedP50MS), ms(o.CommitNoFlushWait.PairedMedianMS))
		x := o.Extraction
		p("Fact extraction: the same turns through a store with `EXTRACT_FACTS` off and on (one extract job per turn, written in the commit's transaction; the model is asked later, by process-jobs), no adapter, alternating.\n\n%s", phaseHeader)
		phaseRow("store", "extraction off", x.Off)
		phaseRow("store", "extraction on", x.On)
		xn := o.ExtractionNoFlushWait
		phaseRow("store", "extraction off, synchronous_commit off", xn.Off)
		phaseRow("store", "extraction on, synchronous_commit off", xn.On)
		p("\nExtraction adds **%s ms** to the p50 (median of the paired differences %s ms); with `synchronous_commit` off, **%s ms** (paired %s ms).\n\n",
			ms(x.AddedP50MS), ms(x.PairedMedianMS), ms(xn.AddedP50MS), ms(xn.PairedMedianMS))
		d := o.Delivery
		p("Delivery started by the commit (in-process loop), to a local receiver verifying each signature: %d commits 5 ms apart, %d delivered, delay from the commit's answer to receipt p50 **%s ms**, p90 %s ms, p99 **%s ms**, max %s ms; %d of %d delivery attempts failed (%.3f%%).\n\n",
			d.Commits, d.Delivered, ms(d.Delay.P50MS), ms(d.Delay.P90MS), ms(d.Delay.P99MS), ms(d.Delay.MaxMS),
			d.FailedAttempts, d.Attempts, d.FailedShare*100)
		if m := o.Mem0Delivery; m != nil {
			p("The same to a local server speaking Mem0's API (the Mem0 adapter's add-memories request, redacted, `Token` auth): %d commits, %d delivered, delay p50 **%s ms**, p90 %s ms, p99 **%s ms**, max %s ms; %d of %d delivery attempts failed (%.3f%%).\n\n",
				m.Commits, m.Delivered, ms(m.Delay.P50MS), ms(m.Delay.P90MS), ms(m.Delay.P99MS), ms(m.Delay.MaxMS),
				m.FailedAttempts, m.Attempts, m.FailedShare*100)
		}
		u := o.Outage
		p("Receiver down for %.0f s while %d clients commit %d turns (%d commit errors), %d deliveries refused meanwhile; back up, every job done %.1f s later: %d jobs, %d changes delivered, **%d lost**, %d dead, %d repeats dropped by id, %d unverifiable.\n\n",
			u.DownSeconds, u.Clients, u.Turns, u.CommitErrors, u.RefusedWhileDown, u.DrainSeconds, u.Jobs, u.Delivered, u.Lost, u.Dead, u.Duplicates, u.Rejected)
		if u.FirstError != "" {
			p("First commit error: `%s`\n\n", u.FirstError)
		}
	}
	if c := w.Cache; c != nil {
		p("## get-context cache (Redis)\n\n")
		p("get-context through the use case, each read answered from the database and through the Redis adapter's cache back to back, in alternating order, after a first pass filled the cache: W2's reads (the last %d messages) and windows of %d messages of the longer growth sessions. A cached read makes two round trips at the same time: the database's check (one statement: whether a job of the user is undelivered, the session's latest expiry) and Redis's look-up; then it decodes the window (CBOR).\n\n%s",
			contextWindowOf(c, 0), contextWindowOf(c, 1), phaseHeader)
		for _, v := range c.Windows {
			phaseRow(fmt.Sprintf("%d messages", v.Messages), "from the database", v.Database)
			phaseRow(fmt.Sprintf("%d messages", v.Messages), "through the cache", v.Cached)
		}
		p("\n")
		for _, v := range c.Windows {
			p("- %d messages: the database's p50 over the cache's **%.2f×** (%s ms against %s ms), p99 %.2f× (%s ms against %s ms); %d cached reads not answered by the cache during the run.\n",
				v.Messages, v.P50Speedup, ms(v.Database.Latency.P50MS), ms(v.Cached.Latency.P50MS), v.P99Speedup,
				ms(v.Database.Latency.P99MS), ms(v.Cached.Latency.P99MS), v.Misses)
		}
		p("\n")
	}
	if rp := w.Replica; rp != nil {
		p("## Read replica\n\n")
		p("Through the use cases, from a store over the primary alone and from one with a streaming replica (`DATABASE_READ_URL`, default `REPLICA_MAX_LAG` and `REPLICA_CHECK_INTERVAL`), each read made on both sides back to back in alternating order, with nothing written meanwhile; then clients that commit turns and read each back (get-context) with the position its answer gave.\n\n%s", phaseHeader)
		for _, r := range []struct {
			name string
			v    *ReplicaReads
		}{{"get-context", rp.Context}, {"recall (hybrid)", rp.Recall}} {
			if r.v == nil {
				continue
			}
			phaseRow(r.name, "primary", r.v.Primary)
			phaseRow(r.name, "with the replica", r.v.Replica)
		}
		for _, m := range rp.Mixed {
			phaseRow(fmt.Sprintf("commit, read after %s ms", ms(m.ThinkMS)), "commit-turn", m.Commit)
			phaseRow(fmt.Sprintf("commit, read after %s ms", ms(m.ThinkMS)), "get-context with the position", m.Read)
		}
		p("\n")
		for _, r := range []struct {
			name string
			v    *ReplicaReads
		}{{"get-context", rp.Context}, {"recall", rp.Recall}} {
			if r.v != nil {
				p("- %s: **%.1f%%** of the reads answered by the replica; p50 %s ms with the replica against %s ms from the primary (%.2f×).\n",
					r.name, r.v.ReplicaShare*100, ms(r.v.Replica.Latency.P50MS), ms(r.v.Primary.Latency.P50MS), r.v.P50Ratio)
			}
		}
		for _, m := range rp.Mixed {
			p("- %d clients, read %s ms after each commit: **%.1f%%** of the reads answered by the replica, **%d stale** of %d, %d direct replay checks.\n",
				m.Clients, ms(m.ThinkMS), m.ReplicaShare*100, m.Stale, m.Read.Ops, m.Checks)
		}
		p("\n")
	}
	if len(charts) > 0 {
		p("## Charts\n\n")
		for _, c := range charts {
			p("![%s](%s)\n\n", c, c)
		}
	}
	if len(r.Notes) > 0 {
		p("## Notes\n\n")
		for _, n := range r.Notes {
			p("- %s\n", n)
		}
	}
	return b.String()
}

// contextWindowOf is the window size of the cache workload's i-th window, 0 when absent.
func contextWindowOf(c *Cache, i int) int {
	if i < len(c.Windows) {
		return c.Windows[i].Messages
	}
	return 0
}

func eachLevel[T any](l *Levels[T], fn func(level string, v *T)) {
	if l.Store != nil {
		fn("store", l.Store)
	}
	if l.HTTP != nil {
		fn("http", l.HTTP)
	}
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

func ms(v float64) string {
	switch {
	case v < 0:
		return "-" + ms(-v)
	case v < 1:
		return fmt.Sprintf("%.3f", v)
	case v < 100:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func num(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// conversationSystemLabels name the systems of ConversationQuality in the report.
var conversationSystemLabels = map[string]string{
	"text": "recall, text", "vector": "recall, vector", "hybrid": "recall, hybrid (default)",
	"bm25": "BM25 (k1 1.2, b 0.75), PostgreSQL's lexemes", "last-messages": "last 25 messages, newest first",
}

// ConversationMarkdown renders the conversation scores: a section of results.md, and the table
// docs/benchmarks.md quotes.
func ConversationMarkdown(cq *ConversationQuality) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("## Recall over conversations: %d questions about %d conversations (set `%s`, source messages, store, embedder %s)\n\n",
		cq.Questions, cq.Conversations, cq.SetID, cq.Embedder)
	p("%d sessions, %d turns, each speaker's name in the message's `name`, each conversation one user; every question labelled with the turns that answer it. "+
		"hit@n: an answering turn in the first n (hit@25 asked with k 25, the others with k 10); recall@10: the share of the answering turns in the first 10; "+
		"MRR: 1 / rank of the first, 0 below 10; ±1 turn: hit@10 counting the turn before or after one. Ties count over their orders.\n\n",
		cq.Sessions, cq.Turns)
	p("| System | hit@1 | hit@5 | hit@10 | hit@25 | recall@10 | MRR | hit@10 ±1 turn |\n|---|---|---|---|---|---|---|---|\n")
	for _, s := range cq.Systems {
		a := s.All
		p("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", conversationLabel(s.Name),
			a.HitAt1, a.HitAt5, a.HitAt10, a.HitAt25, a.RecallAt10, a.MRR, a.HitAt10Neighbour)
	}
	p("\nhit@10 by kind of question:\n\n| Questions |")
	for _, s := range cq.Systems {
		p(" %s |", s.Name)
	}
	p("\n|---|%s\n", strings.Repeat("---|", len(cq.Systems)))
	row := func(label string, score func(ConversationSystem) ConversationScore) {
		if len(cq.Systems) == 0 || score(cq.Systems[0]).Questions == 0 {
			return
		}
		p("| %s (%d) |", label, score(cq.Systems[0]).Questions)
		for _, s := range cq.Systems {
			p(" %.3f |", score(s).HitAt10)
		}
		p("\n")
	}
	for _, k := range QuestionKinds {
		row(k, func(s ConversationSystem) ConversationScore { return s.ByKind[k] })
	}
	row("sharing a word with the answer", func(s ConversationSystem) ConversationScore { return s.Lexical })
	row("sharing none (paraphrase)", func(s ConversationSystem) ConversationScore { return s.Paraphrase })
	row("all", func(s ConversationSystem) ConversationScore { return s.All })
	p("\n")
	return b.String()
}

func conversationLabel(name string) string {
	if l, ok := conversationSystemLabels[name]; ok {
		return l
	}
	return name
}

// MatchingMarkdown renders how recall tells off-topic questions from labelled ones (Matching)
// on one set: per mode, what its defaults answer, then for the default mode (hybrid) what a
// gate at each floor of best relevance does.
func MatchingMarkdown(set string, ms []Matching) string {
	if len(ms) == 0 {
		return ""
	}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("Off-topic questions (%s, set `%s`): %d questions about nothing stored beside the %d labelled ones. "+
		"Flagged: the answer's best relevance is below the floor (`matched` false).\n\n", set, OffTopicSetID(), ms[0].OffTopic, ms[0].OnTopic)
	p("| Mode | off-topic: no result | off-topic: best relevance, median / max | off-topic flagged | labelled flagged |\n|---|---|---|---|---|\n")
	for _, m := range ms {
		p("| %s | %.3f | %.3f / %.3f | %.3f | %.3f |\n", m.Mode, m.OffTopicEmpty, m.OffTopicBestMedian, m.OffTopicBestMax, m.OffTopicFlagged, m.OnTopicFlagged)
	}
	for _, m := range ms {
		if m.Mode != "hybrid" {
			continue
		}
		p("\n| Floor of best relevance (hybrid) | off-topic flagged | labelled flagged | hit@5 | hit@10 | MRR |\n|---|---|---|---|---|---|\n")
		for _, g := range m.Gates {
			p("| %.2f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", g.Floor, g.OffTopicFlagged, g.OnTopicFlagged, g.HitAt5, g.HitAt10, g.MRR)
		}
	}
	p("\n")
	return b.String()
}
