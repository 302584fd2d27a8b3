package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/agentmem/agentmem/shared/service"
)

// embedPending embeds the memories, knowledge chunks and messages that wait for a vector of the
// configured model, as the sweep's scheduled run does: after an outage of the embedding
// provider, or after a change of EMBEDDING_MODEL (every row of the old model is re-embedded;
// run it until more is false). It prints the counts; a provider that is still unavailable is
// an error, after what was done is printed.
func embedPending(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("embed-pending", flag.ContinueOnError)
	limit := fs.Int("limit", 10_000, "most rows to embed")
	budget := fs.Duration("max-duration", 10*time.Minute, "time budget")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *limit < 1 || *budget <= 0 {
		return fmt.Errorf("--limit and --max-duration must be positive")
	}
	svc, err := service.Start(ctx)
	if err != nil {
		return err
	}
	defer svc.Close()
	ctx, cancel := context.WithTimeout(ctx, *budget)
	defer cancel()
	res, runErr := svc.App.EmbedPendingRows(ctx, *limit)
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		return err
	}
	return runErr
}
