package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/service"
)

const jobsUsage = `usage: agentmem jobs <list|get|retry|purge> [flags]

  list   [--status pending|running|done|dead] [--adapter NAME] [--limit N] [--cursor C]
  get    ID
  retry  ID                          make a dead job pending again
  purge  --status done|dead [--older-than D]
`

// jobs lists, shows, retries and purges the outbox's jobs, as the jobs function does for a
// service caller.
func jobs(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, jobsUsage)
		return errors.New("name an operation: list, get, retry or purge")
	}
	op, args := args[0], args[1:]
	fs := flag.NewFlagSet("jobs "+op, flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), jobsUsage) }
	var run func(svc *service.Service) (any, error)
	switch op {
	case app.JobsOpList:
		var in app.ListJobsInput
		optString(fs, "status", "only jobs of this status", &in.Status)
		optString(fs, "adapter", "only jobs of this adapter", &in.Adapter)
		optString(fs, "cursor", "next_cursor of the previous page", &in.Cursor)
		fs.Func("limit", "jobs per page (1 to 200, default 50)", func(v string) error {
			var n int64
			if _, err := fmt.Sscan(v, &n); err != nil {
				return errors.New("must be a number")
			}
			in.Limit = &n
			return nil
		})
		run = func(svc *service.Service) (any, error) {
			return svc.App.ListJobs(ctx, auth.Principal{Role: auth.RoleService}, in)
		}
	case app.JobsOpGet, app.JobsOpRetry:
		run = func(svc *service.Service) (any, error) {
			id, err := uuid.Parse(fs.Arg(0))
			if fs.NArg() != 1 || err != nil {
				return nil, errors.New("name one job id (a UUID)")
			}
			if op == app.JobsOpGet {
				return svc.App.GetJob(ctx, auth.Principal{Role: auth.RoleService}, app.OneJobInput{ID: ptr(id.String())})
			}
			return svc.App.RetryDeadJob(ctx, id)
		}
	case app.JobsOpPurge:
		status := fs.String("status", "", "done or dead (required)")
		older := fs.Duration("older-than", 0, "only jobs that finished at least this long ago (a Go duration)")
		run = func(svc *service.Service) (any, error) {
			if *older < 0 {
				return nil, errors.New("--older-than must not be negative")
			}
			return svc.App.Purge(ctx, *status, *older)
		}
	default:
		fmt.Fprint(os.Stderr, jobsUsage)
		return fmt.Errorf("unknown operation %q: list, get, retry or purge", op)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 && op != app.JobsOpGet && op != app.JobsOpRetry {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	svc, err := service.Start(ctx)
	if err != nil {
		return err
	}
	defer svc.Close()
	out, err := run(svc)
	if err != nil {
		return problemText(err)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// processJobs delivers due jobs now, as the process-jobs function does.
func processJobs(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("process-jobs", flag.ContinueOnError)
	limit := fs.Int("limit", app.DefaultProcessJobsLimit, "most jobs to handle")
	budget := fs.Duration("max-duration", time.Minute, "time budget")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *limit < 1 || *budget <= 0 {
		return errors.New("--limit and --max-duration must be positive")
	}
	svc, err := service.Start(ctx)
	if err != nil {
		return err
	}
	defer svc.Close()
	out, err := svc.App.RunJobs(ctx, *limit, *budget)
	if err != nil {
		return problemText(err)
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

// problemText is a use case's error as the terminal shows it: the detail of an error the
// request caused and the fields it names; the server's own errors with their cause.
func problemText(err error) error {
	ae := app.Problem(err)
	if !ae.Code.CallerFault() {
		return err
	}
	parts := []string{ae.Detail}
	for _, f := range ae.Fields {
		parts = append(parts, f.Field+" "+f.Message)
	}
	return errors.New(strings.Join(parts, "; "))
}

// optString is a string flag that stays nil unless given.
func optString(fs *flag.FlagSet, name, usage string, to **string) {
	fs.Func(name, usage, func(v string) error {
		*to = &v
		return nil
	})
}

func ptr[T any](v T) *T { return &v }
