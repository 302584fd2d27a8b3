// Package lambdainvoke starts the process-jobs function from a function that just wrote jobs:
// an asynchronous Lambda invocation (InvocationType Event) with the event shared/lambdaentry
// routes to the function's scheduled entry. Lambda queues the event and answers 202 at once,
// so the committing function waits one API call (a few milliseconds in-region), not the
// delivery; Lambda retries the invocation itself if process-jobs fails, and the EventBridge
// schedule picks up anything a lost notification left.
package lambdainvoke

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/agentmem/agentmem/shared/lambdaentry"
)

// Config configures an Invoker.
type Config struct {
	// Function is the name or ARN of the function to invoke (process-jobs).
	Function string
	// Region is the function's region; default the AWS configuration's (Lambda sets AWS_REGION).
	Region string
	// Timeout bounds one invocation request; default 2s.
	Timeout time.Duration
	// BaseEndpoint replaces Lambda's regional endpoint: a VPC endpoint, or a test server.
	BaseEndpoint string
	// AWS, when set, is the AWS configuration to use instead of the default chain.
	AWS *aws.Config
	Log *slog.Logger
}

// Invoker invokes the function asynchronously; it implements app.Notifier.
type Invoker struct {
	cfg    Config
	client *lambda.Client
}

// New builds an Invoker.
func New(ctx context.Context, cfg Config) (*Invoker, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Second
	}
	var ac aws.Config
	if cfg.AWS != nil {
		ac = cfg.AWS.Copy()
	} else {
		var err error
		if ac, err = awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(cfg.Region)); err != nil {
			return nil, fmt.Errorf("lambda invoke: load AWS configuration: %w", err)
		}
	}
	if cfg.Region != "" {
		ac.Region = cfg.Region
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	client := lambda.NewFromConfig(ac, func(o *lambda.Options) {
		// One attempt, bounded by Timeout: the committing invocation waits for it (after its
		// answer, under the function's Lambda extension), and a lost notification only delays
		// delivery until the schedule.
		o.Retryer = aws.NopRetryer{}
		if cfg.BaseEndpoint != "" {
			o.BaseEndpoint = aws.String(cfg.BaseEndpoint)
		}
	})
	return &Invoker{cfg: cfg, client: client}, nil
}

// Invoke sends the function one ProcessJobs event, asynchronously.
func (i *Invoker) Invoke(ctx context.Context) error {
	// Not cancelled with ctx (a caller gone does not stop the call), but within its deadline.
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), i.cfg.Timeout)
	defer cancel()
	if d, ok := ctx.Deadline(); ok {
		var cancelAt context.CancelFunc
		ictx, cancelAt = context.WithDeadline(ictx, d)
		defer cancelAt()
	}
	ctx = ictx
	out, err := i.client.Invoke(ctx, &lambda.InvokeInput{
		FunctionName:   aws.String(i.cfg.Function),
		InvocationType: types.InvocationTypeEvent,
		Payload:        lambdaentry.ProcessJobsEvent,
	})
	if err != nil {
		return fmt.Errorf("invoke %s: %w", i.cfg.Function, err)
	}
	if out.StatusCode != 202 {
		return fmt.Errorf("invoke %s: status %d, want 202", i.cfg.Function, out.StatusCode)
	}
	return nil
}

// Notify invokes the function and logs a failure: the jobs are written, so the next scheduled
// run delivers them anyway.
func (i *Invoker) Notify(ctx context.Context) {
	if err := i.Invoke(ctx); err != nil {
		i.cfg.Log.WarnContext(ctx, "could not start process-jobs; the schedule will deliver the jobs", "error", err)
	}
}
