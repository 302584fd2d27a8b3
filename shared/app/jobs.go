package app

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// The operations of the jobs function.
const (
	JobsOpList  = "list"
	JobsOpGet   = "get"
	JobsOpRetry = "retry"
	JobsOpPurge = "purge"
)

// Limits of jobs list.
const (
	jobsMaxLimit     = 200
	jobsDefaultLimit = 50
	// purgeMaxRows is the most jobs one purge deletes; more say more: true.
	purgeMaxRows = 100_000
)

var jobStatuses = []string{store.JobPending, store.JobRunning, store.JobDone, store.JobDead}

// ListJobsInput is the request of jobs list.
type ListJobsInput struct {
	Op      *string `json:"op"`
	Status  *string `json:"status"`
	Adapter *string `json:"adapter"`
	Limit   *int64  `json:"limit"`
	Cursor  *string `json:"cursor"`
}

// JobList is a page of jobs.
type JobList struct {
	Jobs       []memory.Job `json:"jobs"`
	NextCursor *string      `json:"next_cursor"`
}

func serviceOnly(pr auth.Principal) error {
	if !pr.IsService() {
		return apierror.New(apierror.Forbidden, "jobs is for service callers only")
	}
	return nil
}

// ListJobs lists every user's jobs, the newest first (service callers).
func (a *App) ListJobs(ctx context.Context, pr auth.Principal, in ListJobsInput) (JobList, error) {
	if err := serviceOnly(pr); err != nil {
		return JobList{}, err
	}
	var f apierror.Fields
	p := store.ListJobsParams{Limit: int(intField(&f, "limit", in.Limit, jobsDefaultLimit, 1, jobsMaxLimit))}
	if in.Status != nil {
		p.Status = oneOf(&f, "status", in.Status, "", jobStatuses...)
	}
	if in.Adapter != nil {
		p.Adapter = oneOf(&f, "adapter", in.Adapter, "", adapter.JobKinds()...)
	}
	p.After = jobsCursor.after(&f, in.Cursor)
	if err := f.Err(); err != nil {
		return JobList{}, err
	}
	page, err := a.store.ListJobs(ctx, p)
	if err != nil {
		return JobList{}, err
	}
	return JobList{Jobs: page.Jobs, NextCursor: jobsCursor.next(page.Next)}, nil
}

// OneJobInput is the request of jobs get and retry.
type OneJobInput struct {
	Op *string `json:"op"`
	ID *string `json:"id"`
}

func oneJob(pr auth.Principal, in OneJobInput) (uuid.UUID, error) {
	if err := serviceOnly(pr); err != nil {
		return uuid.Nil, err
	}
	var f apierror.Fields
	id := parseUUID(&f, "id", in.ID, true)
	if err := f.Err(); err != nil {
		return uuid.Nil, err
	}
	return *id, nil
}

// GetJob reads one job.
func (a *App) GetJob(ctx context.Context, pr auth.Principal, in OneJobInput) (memory.Job, error) {
	id, err := oneJob(pr, in)
	if err != nil {
		return memory.Job{}, err
	}
	return a.store.GetJob(ctx, id)
}

// RetryJob makes a dead job pending again, with a fresh count of attempts (others: 409).
func (a *App) RetryJob(ctx context.Context, pr auth.Principal, in OneJobInput) (memory.Job, error) {
	id, err := oneJob(pr, in)
	if err != nil {
		return memory.Job{}, err
	}
	return a.RetryDeadJob(ctx, id)
}

// RetryDeadJob is RetryJob for the operator command.
func (a *App) RetryDeadJob(ctx context.Context, id uuid.UUID) (memory.Job, error) {
	j, err := a.store.RetryJob(ctx, id)
	if err != nil {
		return j, err
	}
	a.log.InfoContext(ctx, "job retried", "job_id", id.String(), "adapter", j.Adapter)
	a.notify(ctx)
	return j, nil
}

// PurgeJobsInput is the request of jobs purge.
type PurgeJobsInput struct {
	Op               *string `json:"op"`
	Status           *string `json:"status"`
	OlderThanSeconds *int64  `json:"older_than_seconds"`
}

// PurgeJobsOutput is its answer.
type PurgeJobsOutput struct {
	Deleted int64 `json:"deleted"`
}

// PurgeJobs deletes done or dead jobs created at least older_than_seconds ago (default 0:
// all of them).
func (a *App) PurgeJobs(ctx context.Context, pr auth.Principal, in PurgeJobsInput) (PurgeJobsOutput, error) {
	if err := serviceOnly(pr); err != nil {
		return PurgeJobsOutput{}, err
	}
	var f apierror.Fields
	status := ""
	if in.Status == nil {
		f.Add("status", "is required")
	} else {
		status = oneOf(&f, "status", in.Status, "", store.JobDone, store.JobDead)
	}
	older := intField(&f, "older_than_seconds", in.OlderThanSeconds, 0, 0, maxTTLSeconds)
	if err := f.Err(); err != nil {
		return PurgeJobsOutput{}, err
	}
	return a.Purge(ctx, status, time.Duration(older)*time.Second)
}

// purgeParams says which finished jobs a purge deletes. With the get-context cache enabled,
// the jobs its read-your-writes check counts stay as long as it needs them (see adapter/redis):
// a done job of the cache for the settle time, a dead one (or an erasure's fan-out that never
// became one) until every window that may predate its change has expired.
func (a *App) purgeParams(status string, olderThan time.Duration, limit int) store.PurgeJobsParams {
	p := store.PurgeJobsParams{Status: status, OlderThan: olderThan, Limit: limit}
	switch {
	case a.cache == nil:
	case status == store.JobDone:
		p.KeepAdapters, p.KeepFor = []string{a.cache.Name()}, a.cfg.CacheSettle
	case status == store.JobDead:
		p.KeepAdapters, p.KeepFor = []string{a.cache.Name(), adapter.Fanout}, a.cache.Retention()
	}
	return p
}

// Purge is PurgeJobs for the operator command: every done or dead job older than olderThan.
func (a *App) Purge(ctx context.Context, status string, olderThan time.Duration) (PurgeJobsOutput, error) {
	if status != store.JobDone && status != store.JobDead {
		return PurgeJobsOutput{}, apierror.Invalid("status", "must be one of done, dead")
	}
	n, err := a.store.PurgeJobs(ctx, a.purgeParams(status, olderThan, purgeMaxRows))
	if err != nil {
		return PurgeJobsOutput{}, err
	}
	a.log.InfoContext(ctx, "jobs purged", "status", status, "deleted", n)
	return PurgeJobsOutput{Deleted: n}, nil
}
