package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/adapter/mem0"
	"github.com/agentmem/agentmem/shared/adapter/redis"
	"github.com/agentmem/agentmem/shared/adapter/webhook"
	"github.com/agentmem/agentmem/shared/envvar"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/redact"
)

// JobsSettings are the settings of job delivery; the service hands them to the use cases as
// their JobsConfig, whose fields they mirror one for one.
type JobsSettings struct {
	// MaxAttempts (JOBS_MAX_ATTEMPTS, 1 to 100) is the attempt cap.
	MaxAttempts int
	// BackoffBase and BackoffMax (JOBS_BACKOFF_BASE, JOBS_BACKOFF_MAX) shape the wait before
	// a retry.
	BackoffBase, BackoffMax time.Duration
	// Lease (JOBS_LEASE) is how long a claimed job stays its worker's.
	Lease time.Duration
	// Concurrency (JOBS_CONCURRENCY, 1 to 64) is the most deliveries in flight in one run.
	Concurrency int
	// DoneRetention (JOBS_DONE_RETENTION) is how long delivered jobs are kept.
	DoneRetention time.Duration
}

// DefaultMem0Recall is MEM0_RECALL's default: recall asks only the database.
const DefaultMem0Recall = mem0.DefaultRecall

// The values of JOBS_NOTIFY.
const (
	JobsNotifyProcess = "process"
	JobsNotifyNone    = "none"
	// JobsNotifyLambdaPrefix starts "lambda:<function name or ARN>".
	JobsNotifyLambdaPrefix = "lambda:"
)

// loadJobs reads ADAPTERS, the JOBS_* settings and those of the enabled adapters.
func (c *Config) loadJobs(getenv func(string) string) error {
	var err error
	if c.Adapters, err = adapter.ParseNames(getenv("ADAPTERS")); err != nil {
		return fmt.Errorf("ADAPTERS: %w", err)
	}
	if c.Jobs.MaxAttempts, err = envvar.Int(getenv, "JOBS_MAX_ATTEMPTS", memory.DefaultJobsMaxAttempts, 1, 100); err != nil {
		return err
	}
	durations := []struct {
		name     string
		to       *time.Duration
		def, min time.Duration
	}{
		{"JOBS_BACKOFF_BASE", &c.Jobs.BackoffBase, memory.DefaultJobsBackoffBase, time.Millisecond},
		{"JOBS_BACKOFF_MAX", &c.Jobs.BackoffMax, memory.DefaultJobsBackoffMax, time.Millisecond},
		{"JOBS_LEASE", &c.Jobs.Lease, memory.DefaultJobsLease, time.Second},
		{"JOBS_DONE_RETENTION", &c.Jobs.DoneRetention, memory.DefaultJobsDoneRetention, time.Second},
		{"JOBS_POLL_INTERVAL", &c.JobsPollInterval, memory.DefaultJobsPollInterval, 10 * time.Millisecond},
	}
	for _, d := range durations {
		if *d.to, err = envvar.Duration(getenv, d.name, d.def, d.min); err != nil {
			return err
		}
	}
	if c.Jobs.BackoffMax < c.Jobs.BackoffBase {
		return fmt.Errorf("JOBS_BACKOFF_MAX (%s) must not be below JOBS_BACKOFF_BASE (%s)", c.Jobs.BackoffMax, c.Jobs.BackoffBase)
	}
	if c.Jobs.Concurrency, err = envvar.Int(getenv, "JOBS_CONCURRENCY", memory.DefaultJobsConcurrency, 1, 64); err != nil {
		return err
	}
	c.JobsNotify = strings.TrimSpace(getenv("JOBS_NOTIFY"))
	switch {
	case c.JobsNotify == "" && getenv("AWS_LAMBDA_FUNCTION_NAME") != "":
		c.JobsNotify = JobsNotifyNone
	case c.JobsNotify == "":
		c.JobsNotify = JobsNotifyProcess
	case c.JobsNotify == JobsNotifyProcess, c.JobsNotify == JobsNotifyNone:
	case strings.HasPrefix(c.JobsNotify, JobsNotifyLambdaPrefix) && len(c.JobsNotify) > len(JobsNotifyLambdaPrefix):
	default:
		return fmt.Errorf("JOBS_NOTIFY must be process, none or lambda:<function name or ARN>, not %q", c.JobsNotify)
	}

	// Each adapter reads its own settings, whether ADAPTERS names it or not, so that a
	// mistyped value stops the start either way.
	if c.Webhook, err = webhook.ConfigFromEnv(getenv); err != nil {
		return err
	}
	if c.Redis, err = redis.ConfigFromEnv(getenv); err != nil {
		return err
	}
	if c.Mem0, err = mem0.ConfigFromEnv(getenv); err != nil {
		return err
	}
	c.PIIHashSalt = getenv(redact.SaltEnv)
	if len(c.Adapters) > 0 {
		if c.PIIHashSalt == "" {
			return fmt.Errorf("ADAPTERS is set, so %s is required: content is redacted before any adapter, and the "+
				"hashes of what is removed are keyed with it (at least %d bytes: openssl rand -hex 32)", redact.SaltEnv, redact.MinSaltLen)
		}
		if _, err := redact.New(c.PIIHashSalt); err != nil {
			return err
		}
	}
	if (c.ExtractFacts || c.Summaries) && c.Chat.Timeout >= c.Jobs.Lease {
		return fmt.Errorf("CHAT_TIMEOUT (%s) must be shorter than JOBS_LEASE (%s): fact extraction and summaries ask the "+
			"chat model within a job's lease", c.Chat.Timeout, c.Jobs.Lease)
	}
	if slices.Contains(c.Adapters, adapter.Webhook) {
		if c.Webhook.Timeout >= c.Jobs.Lease {
			return fmt.Errorf("WEBHOOK_TIMEOUT (%s) must be shorter than JOBS_LEASE (%s): a delivery must end within its lease",
				c.Webhook.Timeout, c.Jobs.Lease)
		}
		if _, err := webhook.New(c.Webhook); err != nil {
			return fmt.Errorf("ADAPTERS names webhook: %w", err)
		}
	}
	if slices.Contains(c.Adapters, adapter.Redis) {
		if c.Redis.Timeout > time.Second {
			return fmt.Errorf("REDIS_TIMEOUT (%s) must be at most 1s: it is how long a request may wait on Redis before reading the database", c.Redis.Timeout)
		}
		if redis.DeliverTimeout >= c.Jobs.Lease {
			return fmt.Errorf("JOBS_LEASE (%s) must be longer than a Redis delivery (%s)", c.Jobs.Lease, redis.DeliverTimeout)
		}
		if err := redis.Check(c.Redis); err != nil {
			return fmt.Errorf("ADAPTERS names redis: %w", err)
		}
	}
	if slices.Contains(c.Adapters, adapter.Mem0) {
		if c.Mem0.Timeout >= c.Jobs.Lease {
			return fmt.Errorf("MEM0_TIMEOUT (%s) must be shorter than JOBS_LEASE (%s): a delivery must end within its lease",
				c.Mem0.Timeout, c.Jobs.Lease)
		}
		if _, err := mem0.New(c.Mem0); err != nil {
			return fmt.Errorf("ADAPTERS names mem0: %w", err)
		}
	} else if c.Mem0.Recall {
		return errors.New("MEM0_RECALL=true needs the Mem0 adapter: add mem0 to ADAPTERS")
	}
	return nil
}
