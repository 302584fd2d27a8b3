package app

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/telemetry"
)

// The defaults of one process-jobs run (the function's limit and max_duration_ms, the
// scheduled run, agentmem process-jobs).
const (
	DefaultProcessJobsLimit  = 1000
	DefaultProcessJobsBudget = 20 * time.Second
	// claimBatch is the most jobs one claim takes.
	claimBatch = 50
	// minClaimWindow is the least time a run must have left to claim more jobs.
	minClaimWindow = time.Second
)

// JobsConfig configures job delivery; zero fields take memory.DefaultJobs*.
type JobsConfig struct {
	// MaxAttempts is the attempt cap: a job failing that many times goes dead.
	MaxAttempts int
	// BackoffBase and BackoffMax shape the wait before a retry: BackoffBase * 2^(attempt-1),
	// at most BackoffMax, of which a random half is taken off (jitter), so retries of many
	// jobs that failed together spread out.
	BackoffBase, BackoffMax time.Duration
	// Lease is how long a claimed job stays its worker's; a worker that died mid-delivery
	// leaves it to be claimed again when it has passed. It must outlast one delivery.
	Lease time.Duration
	// Concurrency is the most deliveries in flight in one run.
	Concurrency int
	// DoneRetention is how long delivered jobs are kept (for jobs list); process-jobs deletes
	// older ones.
	DoneRetention time.Duration
}

func (c JobsConfig) withDefaults() JobsConfig {
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = memory.DefaultJobsMaxAttempts
	}
	if c.BackoffBase <= 0 {
		c.BackoffBase = memory.DefaultJobsBackoffBase
	}
	if c.BackoffMax <= 0 {
		c.BackoffMax = memory.DefaultJobsBackoffMax
	}
	if c.Lease <= 0 {
		c.Lease = memory.DefaultJobsLease
	}
	if c.Concurrency <= 0 {
		c.Concurrency = memory.DefaultJobsConcurrency
	}
	if c.DoneRetention <= 0 {
		c.DoneRetention = memory.DefaultJobsDoneRetention
	}
	return c
}

// Backoff is the wait before the retry that follows failed attempt n (1-based): base * 2^(n-1),
// at most max, less a random part of up to half of it.
func (c JobsConfig) Backoff(n int) time.Duration {
	c = c.withDefaults()
	d := c.BackoffMax
	if n >= 1 && n <= 40 {
		if e := c.BackoffBase << (n - 1); e > 0 && e < d {
			d = e
		}
	}
	return d/2 + rand.N(d/2+1)
}

// Notifier starts delivery soon after a change wrote jobs: in the process that serves
// (Kick), or by invoking the process-jobs function (shared/lambdainvoke). It never fails the
// change: a notification that does not get through leaves the jobs to the next run.
type Notifier interface {
	Notify(ctx context.Context)
}

// Kick is the Notifier of a long-running process: it wakes that process's DeliveryLoop.
type Kick struct{ ch chan struct{} }

// NewKick makes a Kick.
func NewKick() *Kick { return &Kick{ch: make(chan struct{}, 1)} }

// Notify wakes the loop without waiting; a wake-up already pending covers this one too.
func (k *Kick) Notify(context.Context) {
	select {
	case k.ch <- struct{}{}:
	default:
	}
}

// notify tells the Notifier that a change wrote jobs, and counts them (one per adapter);
// nothing without adapters.
func (a *App) notify(ctx context.Context) {
	adapters := a.store.Adapters()
	if len(adapters) == 0 && !a.cfg.InternalJobs {
		return
	}
	for _, name := range adapters {
		telemetry.RecordJob(ctx, name, store.JobPending)
	}
	if a.cfg.Notifier != nil {
		a.cfg.Notifier.Notify(ctx)
	}
}

// ProcessJobsInput is the request of process-jobs.
type ProcessJobsInput struct {
	MaxDurationMS *int64 `json:"max_duration_ms"`
	Limit         *int64 `json:"limit"`
}

// ProcessJobsOutput is the answer of process-jobs: how many jobs it handled, and what became
// of them (delivered, to be retried, dead); more when due jobs remain.
type ProcessJobsOutput struct {
	Processed int  `json:"processed"`
	Done      int  `json:"done"`
	Retried   int  `json:"retried"`
	Dead      int  `json:"dead"`
	More      bool `json:"more"`
}

// ProcessJobs delivers due jobs for a service caller, within the request's budget.
func (a *App) ProcessJobs(ctx context.Context, pr auth.Principal, in ProcessJobsInput) (ProcessJobsOutput, error) {
	if !pr.IsService() {
		return ProcessJobsOutput{}, apierror.New(apierror.Forbidden, "process-jobs is for service callers only")
	}
	var f apierror.Fields
	budget := intField(&f, "max_duration_ms", in.MaxDurationMS, DefaultProcessJobsBudget.Milliseconds(), 1, 900_000)
	limit := intField(&f, "limit", in.Limit, DefaultProcessJobsLimit, 1, 100_000)
	if err := f.Err(); err != nil {
		return ProcessJobsOutput{}, err
	}
	return a.RunJobs(ctx, int(limit), time.Duration(budget)*time.Millisecond)
}

// ScheduledProcessJobs is the run a scheduler (an EventBridge rule) or a committing function's
// invocation triggers: the defaults, bounded by ctx's deadline.
func (a *App) ScheduledProcessJobs(ctx context.Context) (ProcessJobsOutput, error) {
	return a.RunJobs(ctx, DefaultProcessJobsLimit, DefaultProcessJobsBudget)
}

// RunJobs delivers up to limit due jobs within budget (and ctx's deadline, less headroom):
// claim a batch in a short transaction, deliver it outside any transaction, record the
// outcomes, again until none is due. Then it deletes delivered jobs past their retention.
func (a *App) RunJobs(ctx context.Context, limit int, budget time.Duration) (ProcessJobsOutput, error) {
	start := time.Now()
	jc := a.cfg.Jobs.withDefaults()
	deadline := WorkDeadline(ctx, budget)
	var out ProcessJobsOutput
	stopped := false
	for {
		if out.Processed >= limit || time.Until(deadline) < minClaimWindow {
			stopped = true
			break
		}
		claimed, dead, err := a.store.ClaimJobs(ctx, store.ClaimJobsParams{Limit: min(claimBatch, limit-out.Processed),
			Lease: jc.Lease, MaxAttempts: jc.MaxAttempts})
		if err != nil {
			return out, err
		}
		for _, d := range dead {
			telemetry.RecordJob(ctx, d.Adapter, store.JobDead)
			a.log.WarnContext(ctx, "job dead: its last attempt did not finish within its lease", "job_id", d.ID.String(),
				"adapter", d.Adapter, "intent", d.Intent, "attempt", d.Attempts)
		}
		out.Processed += len(claimed) + len(dead)
		out.Dead += len(dead)
		if len(claimed) == 0 && len(dead) == 0 {
			break
		}
		results := a.deliverAll(ctx, claimed, deadline, jc)
		// Recorded with a context of its own: a run whose caller gave up still records what
		// it delivered, so nothing is delivered twice for that reason.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		_, err = a.store.RecordJobs(rctx, results)
		cancel()
		if err != nil {
			return out, err
		}
		for _, r := range results {
			switch r.Status {
			case store.JobDone:
				out.Done++
			case store.JobDead:
				out.Dead++
			default:
				out.Retried++
			}
		}
	}
	if stopped {
		more, err := a.store.HasDueJobs(ctx)
		if err != nil {
			return out, err
		}
		out.More = more
	}
	purged, err := a.store.PurgeJobs(ctx, a.purgeParams(store.JobDone, jc.DoneRetention, claimBatch*20))
	if err != nil {
		return out, err
	}
	if out.Processed > 0 || purged > 0 {
		a.log.InfoContext(ctx, "process jobs", "processed", out.Processed, "done", out.Done, "retried", out.Retried,
			"dead", out.Dead, "more", out.More, "purged", purged, "duration_ms", time.Since(start).Milliseconds())
	}
	return out, nil
}

// deliverAll delivers claimed jobs, at most jc.Concurrency at once; the jobs of one adapter and
// user go one after the other, oldest first, and each delivery ends before the run's deadline
// and the job's lease. (Across runs and retries there is no order: events carry their seqs and
// occurred_at.)
func (a *App) deliverAll(ctx context.Context, claimed []store.ClaimedJob, deadline time.Time, jc JobsConfig) []store.JobResult {
	type key struct {
		adapter string
		user    string
	}
	var order []key
	groups := map[key][]int{}
	for i, j := range claimed {
		k := key{j.Adapter, j.UserID}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	for _, k := range order {
		slices.SortFunc(groups[k], func(a, b int) int {
			if c := claimed[a].CreatedAt.Compare(claimed[b].CreatedAt); c != 0 {
				return c
			}
			return strings.Compare(claimed[a].ID.String(), claimed[b].ID.String())
		})
	}
	results := make([]store.JobResult, len(claimed))
	var g errgroup.Group
	g.SetLimit(jc.Concurrency)
	for _, k := range order {
		g.Go(func() error {
			for _, i := range groups[k] {
				results[i] = a.deliverOne(ctx, claimed[i], deadline, jc)
			}
			return nil
		})
	}
	_ = g.Wait() // the deliveries report through results
	return results
}

// deliverOne delivers one claimed job: its events read now, redacted, handed to its adapter.
func (a *App) deliverOne(ctx context.Context, j store.ClaimedJob, deadline time.Time, jc JobsConfig) store.JobResult {
	res := store.JobResult{ID: j.ID, UserID: j.UserID, Attempts: j.Attempts, Status: store.JobDone}
	// The lease was taken at the claim: leave a margin so the result is recorded within it.
	end := j.NextAttemptAt.Add(-jc.Lease / 10)
	if deadline.Before(end) {
		end = deadline
	}
	dctx, cancel := context.WithDeadline(ctx, end)
	defer cancel()
	dctx, sp := telemetry.StartAdapter(dctx, j.Adapter)
	err := a.deliver(dctx, j)
	sp.End(err)
	telemetry.RecordDelivery(ctx, j.Adapter, time.Since(j.CreatedAt), err)
	if err == nil {
		telemetry.RecordJob(ctx, j.Adapter, "delivered")
		return res
	}
	msg := errorText(err)
	res.Error = &msg
	if j.Attempts >= jc.MaxAttempts || adapter.IsPermanent(err) {
		res.Status = store.JobDead
		telemetry.RecordJob(ctx, j.Adapter, store.JobDead)
	} else {
		res.Status = store.JobPending
		res.Delay = max(jc.Backoff(j.Attempts), adapter.RetryAfter(err))
		telemetry.RecordJob(ctx, j.Adapter, "retry")
	}
	a.log.WarnContext(ctx, "job delivery failed", "job_id", j.ID.String(), "adapter", j.Adapter, "intent", j.Intent,
		"attempt", j.Attempts, "status", res.Status, "error", msg)
	return res
}

func (a *App) deliver(ctx context.Context, j store.ClaimedJob) error {
	switch j.Adapter {
	case adapter.Extract:
		return a.extract(ctx, j)
	case adapter.Summarize:
		return a.summarize(ctx, j)
	case adapter.Fanout:
		return a.store.ExpandFanout(ctx, j)
	}
	ad, ok := a.cfg.Adapters[j.Adapter]
	if !ok {
		return fmt.Errorf("adapter %q is not enabled in this process (ADAPTERS)", j.Adapter)
	}
	events, err := a.store.LoadEvents(ctx, j)
	if err != nil {
		return fmt.Errorf("read event: %w", err)
	}
	for _, ev := range events {
		ev, err = scrubEvent(a.cfg.Redactor, ev)
		if err != nil {
			return err
		}
		ev.Messages = RawMessages(ev.Messages)
		if err := ad.Deliver(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}

// maxErrorChars bounds a job's last_error.
const maxErrorChars = 500

// errorText is an error as a job records it: its text, valid UTF-8, at most maxErrorChars
// characters. Adapters' errors never hold content (adapter.Adapter), nor do the store's.
func errorText(err error) string {
	msg := strings.ToValidUTF8(err.Error(), "?")
	if errors.Is(err, context.DeadlineExceeded) && !strings.Contains(msg, "deadline") {
		msg += " (deadline exceeded)"
	}
	if utf8.RuneCountInString(msg) > maxErrorChars {
		msg = string([]rune(msg)[:maxErrorChars-1]) + "…"
	}
	return msg
}

// DeliveryLoop delivers jobs until ctx ends, in a long-running process (agentmem serve): at
// once when kick is notified (a change of this process wrote jobs), and every poll interval
// (retries come due, other processes write jobs). A run that fails is logged and tried again
// at the next wake-up.
func (a *App) DeliveryLoop(ctx context.Context, kick *Kick, poll time.Duration) {
	if poll <= 0 {
		poll = memory.DefaultJobsPollInterval
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-kick.ch:
		case <-t.C:
		}
		for ctx.Err() == nil {
			out, err := a.RunJobs(ctx, DefaultProcessJobsLimit, DefaultProcessJobsBudget)
			if err != nil {
				if ctx.Err() == nil {
					a.log.WarnContext(ctx, "process jobs failed", "error", err)
				}
				break
			}
			if !out.More {
				break
			}
		}
	}
}
