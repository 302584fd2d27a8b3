package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/adapter/webhook/webhooktest"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store/storetest"
)

// stdoutOf runs fn and returns what it printed on standard output.
func stdoutOf(t *testing.T, fn func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); done <- b }()
	err = fn()
	w.Close()
	os.Stdout = saved
	return string(<-done), err
}

// agentmem process-jobs delivers what a commit wrote; agentmem jobs lists, retries and purges,
// through the same use cases as the functions, and refuses bad input saying which.
func TestJobsCommands(t *testing.T) {
	ctx := context.Background()
	conn := commandDB(t)
	secret := webhooktest.NewSecret()
	rec, err := webhooktest.NewReceiver(secret)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	t.Setenv("ADAPTERS", "webhook")
	t.Setenv("WEBHOOK_URL", rec.URL)
	t.Setenv("WEBHOOK_SECRET", secret)
	t.Setenv("JOBS_MAX_ATTEMPTS", "1")
	t.Setenv("PII_HASH_SALT", "a-salt-of-more-than-sixteen-bytes")

	st := storetest.OpenURL(t, os.Getenv("DATABASE_URL"), storetest.Adapters("webhook"))
	sc := storetest.Scope("bot")
	for range 2 {
		storetest.Commit(t, st, sc, uuid.New(), []memory.NewMessage{{Role: memory.RoleUser, Content: "hello"}})
	}

	rec.Answer(func(n int) int {
		if n == 1 {
			return 500
		}
		return 0
	})
	out, err := stdoutOf(t, func() error { return processJobs(ctx, []string{"--limit", "10", "--max-duration", "30s"}) })
	if err != nil {
		t.Fatal(err)
	}
	var run struct{ Processed, Done, Dead int }
	if err := json.Unmarshal([]byte(out), &run); err != nil || run.Processed != 2 || run.Done != 1 || run.Dead != 1 {
		t.Fatalf("process-jobs printed %q (%v)", out, err)
	}

	out, err = stdoutOf(t, func() error { return jobs(ctx, []string{"list", "--status", "dead"}) })
	var list struct {
		Jobs []struct {
			ID        string  `json:"id"`
			LastError *string `json:"last_error"`
		} `json:"jobs"`
	}
	if err != nil || json.Unmarshal([]byte(out), &list) != nil || len(list.Jobs) != 1 || list.Jobs[0].LastError == nil {
		t.Fatalf("jobs list printed %q (%v)", out, err)
	}
	dead := list.Jobs[0].ID
	if out, err = stdoutOf(t, func() error { return jobs(ctx, []string{"retry", dead}) }); err != nil || !strings.Contains(out, `"pending"`) {
		t.Fatalf("jobs retry printed %q (%v)", out, err)
	}
	if _, err := stdoutOf(t, func() error { return jobs(ctx, []string{"retry", dead}) }); err == nil || !strings.Contains(err.Error(), "only a dead job") {
		t.Errorf("retry of a pending job: %v", err)
	}
	if _, err := stdoutOf(t, func() error { return processJobs(ctx, nil) }); err != nil {
		t.Fatal(err)
	}
	if out, err = stdoutOf(t, func() error { return jobs(ctx, []string{"get", dead}) }); err != nil || !strings.Contains(out, `"done"`) {
		t.Fatalf("jobs get printed %q (%v)", out, err)
	}
	if out, err = stdoutOf(t, func() error { return jobs(ctx, []string{"purge", "--status", "done"}) }); err != nil ||
		!strings.Contains(out, `"deleted": 2`) {
		t.Fatalf("jobs purge printed %q (%v)", out, err)
	}
	var left int
	if err := conn.QueryRow(ctx, `select count(*) from agentmem.jobs`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d jobs left (%v)", left, err)
	}
	if evs := rec.Events(); len(evs) != 2 {
		t.Errorf("the receiver kept %d events, want 2", len(evs))
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "name an operation"},
		{[]string{"drop"}, "unknown operation"},
		{[]string{"list", "--status", "lost"}, "status must be one of"},
		{[]string{"list", "--limit", "0"}, "limit must be"},
		{[]string{"get", "nope"}, "a UUID"},
		{[]string{"get", uuid.NewString()}, "job not found"},
		{[]string{"purge"}, "status"},
		{[]string{"purge", "--status", "done", "--older-than", "-1h"}, "must not be negative"},
		{[]string{"list", "extra"}, "unexpected arguments"},
	} {
		t.Run(fmt.Sprint(c.args), func(t *testing.T) {
			_, err := stdoutOf(t, func() error { return jobs(ctx, c.args) })
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("jobs %v: %v, want %q", c.args, err, c.want)
			}
		})
	}
	if err := processJobs(ctx, []string{"--limit", "0"}); err == nil {
		t.Error("process-jobs --limit 0 ran")
	}
}
