package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/service"
	"github.com/agentmem/agentmem/shared/store"
)

const backfillUsage = `usage: agentmem backfill [--tenant T] [--user UUID] [--table memories|knowledge|messages|all]
                         [--batch N] [--limit N] [--dry-run] [--no-index]

Embeds, with the configured embedder (EMBEDDING_*), the memories, knowledge chunks and messages of
a scope that hold no vector of its model at its dimension: after a change of model or size, to
finish the rows stored while the provider was down, or to embed the messages stored before
messages were searched. Tool messages and messages without text are never embedded. It first makes the model's HNSW indexes if they are
missing (as agentmem index does), then embeds in batches, with a progress bar on a terminal,
and prints a summary: rows embedded, refused by the model, and left.

It can be stopped at any time (Ctrl-C, a crash, a timeout) and run again: each batch is stored
as soon as it is embedded, and rows already holding a vector of the configured model and
dimension are never selected, so the next run goes on with the rows left and embeds none of
the done ones again. With the provider unavailable it stops, keeps what it did, and exits 1:
run it again when the provider is back.

`

// backfillSummary is what `agentmem backfill` prints when it is done.
type backfillSummary struct {
	Model      string `json:"model"`
	Dimensions int    `json:"dimensions"`
	DryRun     bool   `json:"dry_run,omitempty"`
	// Pending is the rows of the scope waiting for a vector when the run started.
	Pending memory.PendingCount `json:"pending"`
	// Embedded, Failed: rows embedded, and rows the model refused (they stay pending).
	Embedded int64 `json:"embedded"`
	Failed   int64 `json:"failed"`
	// Remaining is the rows of the scope still waiting at the end; absent when they could not
	// be counted.
	Remaining *int64 `json:"remaining,omitempty"`
}

func backfill(ctx context.Context, args []string) error {
	return runBackfill(ctx, args, stdConsole())
}

// runBackfill is `agentmem backfill` writing to con.
func runBackfill(ctx context.Context, args []string, con console) error {
	flags := flag.NewFlagSet("backfill", flag.ContinueOnError)
	flags.SetOutput(con.err)
	var tenant *string
	flags.Func("tenant", "only this tenant's memories, knowledge chunks and messages (\"\" is the tenant-less scope); default: every tenant", func(v string) error {
		tenant = &v
		return nil
	})
	user := flags.String("user", "", "only this user's memories and messages (no knowledge chunks: they belong to no user)")
	table := flags.String("table", "all", "memories, knowledge, messages or all")
	batch := flags.Int("batch", 64, fmt.Sprintf("rows per batch, 1 to %d", store.MaxBackfillBatch))
	limit := flags.Int("limit", 0, "most rows to take in this run (0: all)")
	dry := flags.Bool("dry-run", false, "count the rows to embed, embed nothing")
	noIndex := flags.Bool("no-index", false, "do not make the model's HNSW indexes first")
	flags.Usage = func() {
		fmt.Fprint(flags.Output(), backfillUsage)
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", flags.Args())
	}
	scope := store.PendingScope{TenantID: tenant}
	switch *table {
	case "all":
		scope.Tables = store.PendingAll
	case "memories":
		scope.Tables = store.PendingMemories
	case "knowledge":
		scope.Tables = store.PendingKnowledge
	case "messages":
		scope.Tables = store.PendingMessages
	default:
		return fmt.Errorf("--table must be memories, knowledge, messages or all, not %q", *table)
	}
	if *user != "" {
		id := auth.NormalUserID(*user)
		if !auth.ValidUserID(id) {
			return errors.New("--user must be 1 to 255 printable characters")
		}
		if scope.Tables == store.PendingKnowledge {
			return errors.New("--user selects memories and messages only: knowledge chunks belong to no user")
		}
		scope.UserID = &id
	}
	if *batch < 1 || *batch > store.MaxBackfillBatch {
		return fmt.Errorf("--batch must be 1 to %d", store.MaxBackfillBatch)
	}
	if *limit < 0 {
		return errors.New("--limit must be 0 (all) or more")
	}

	svc, err := startQuietly(ctx)
	if err != nil {
		return err
	}
	defer svc.Close()
	emb := svc.App.Embedder()
	sum := backfillSummary{Model: emb.Model(), Dimensions: emb.Dimensions(), DryRun: *dry}
	if sum.Pending, err = svc.App.CountPending(ctx, scope); err != nil {
		return err
	}
	total := sum.Pending.Total()
	if *dry {
		sum.Remaining = &total
		fmt.Fprintf(con.err, "agentmem backfill: %d rows (%d memories, %d knowledge chunks, %d messages) wait for a vector of %s (%d dimensions); none embedded (--dry-run)\n",
			total, sum.Pending.Memories, sum.Pending.KnowledgeChunks, sum.Pending.Messages, sum.Model, sum.Dimensions)
		return json.NewEncoder(con.out).Encode(sum)
	}
	if !*noIndex {
		stmts, err := svc.App.EnsureEmbeddingIndexes(ctx)
		if err != nil {
			return fmt.Errorf("%w (run agentmem index as the tables' owner, or pass --no-index)", err)
		}
		for _, st := range stmts {
			fmt.Fprintf(con.err, "agentmem backfill: %s\n", st)
		}
	}

	start := time.Now()
	barCon := con
	if total == 0 {
		barCon.tty = false // nothing to show: a bar of 0 rows would be a spinner
	}
	bar := barCon.progressBar(total, "rows")
	res, runErr := svc.App.Backfill(ctx, store.BackfillParams{Scope: scope, Limit: *limit, BatchSize: *batch,
		Progress: func(done int64, _ memory.EmbedPendingResult) {
			if done > bar.GetMax64() {
				bar.ChangeMax64(done) // rows stored meanwhile without a vector
			}
			bar.Set64(done) //nolint:errcheck
		}})
	if runErr == nil && !res.More {
		bar.Finish() //nolint:errcheck
	} else {
		bar.Exit() //nolint:errcheck
	}
	if barCon.tty {
		fmt.Fprintln(con.err)
	}
	sum.Embedded, sum.Failed = res.Total(), res.Failed

	// Count what is left even when ctx was cancelled (Ctrl-C): the summary says where it stopped.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if left, err := svc.App.CountPending(cctx, scope); err == nil {
		n := left.Total()
		sum.Remaining = &n
	} else {
		fmt.Fprintf(con.err, "agentmem backfill: count the rows left: %v\n", err)
	}
	remaining := "unknown"
	if sum.Remaining != nil {
		remaining = fmt.Sprint(*sum.Remaining)
	}
	fmt.Fprintf(con.err, "agentmem backfill: embedded %d rows (%d memories, %d knowledge chunks, %d messages) with %s (%d dimensions) in %s; %d failed, %s remaining\n",
		sum.Embedded, res.Memories, res.KnowledgeChunks, res.Messages, sum.Model, sum.Dimensions,
		time.Since(start).Round(time.Millisecond), sum.Failed, remaining)
	if err := json.NewEncoder(con.out).Encode(sum); err != nil {
		return err
	}

	switch {
	case errors.Is(runErr, embedding.ErrUnavailable):
		return fmt.Errorf("the embedding provider is unavailable (%w); the %d rows embedded are kept: run agentmem backfill again to go on",
			runErr, sum.Embedded)
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted; the %d rows embedded are kept: run the same command again to go on", sum.Embedded)
	case runErr != nil:
		return fmt.Errorf("%w; the %d rows embedded are kept: run the same command again to go on", runErr, sum.Embedded)
	case sum.Failed > 0:
		return fmt.Errorf("the model refused %d rows: they keep no vector of it (running again will not help while their text is the same)", sum.Failed)
	}
	return nil
}

func ensureIndexes(ctx context.Context, args []string) error {
	return runIndex(ctx, args, stdConsole())
}

// runIndex is `agentmem index`: it makes the configured model's HNSW indexes on memories,
// knowledge_chunks and messages where missing, without blocking writes, and prints the
// statements it ran.
func runIndex(ctx context.Context, args []string, con console) error {
	flags := flag.NewFlagSet("index", flag.ContinueOnError)
	flags.SetOutput(con.err)
	flags.Usage = func() {
		fmt.Fprint(flags.Output(), "usage: agentmem index\n\n"+
			"Makes the HNSW indexes of the configured embedding model and dimension (EMBEDDING_*) on\n"+
			"memories, knowledge chunks and messages where they are missing, concurrently (writes go\n"+
			"on), and prints the statements it ran. Vectors of more than 2,000 dimensions get none:\n"+
			"they are ranked exactly. It needs the right to create indexes on the tables (their owner).\n")
	}
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", flags.Args())
	}
	svc, err := service.Start(ctx)
	if err != nil {
		return err
	}
	defer svc.Close()
	stmts, err := svc.App.EnsureEmbeddingIndexes(ctx)
	if err != nil {
		return err
	}
	if len(stmts) == 0 {
		emb := svc.App.Embedder()
		fmt.Fprintf(con.err, "agentmem index: %s gives %d dimensions, more than HNSW indexes (2,000): its rows are ranked exactly, without an index\n",
			emb.Model(), emb.Dimensions())
	}
	for _, st := range stmts {
		fmt.Fprintf(con.out, "%s;\n", st)
	}
	return nil
}
