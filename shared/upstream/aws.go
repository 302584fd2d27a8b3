package upstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// ClassifyAWS sorts an AWS SDK error of provider ("bedrock"): throttling, server errors and
// transport failures are worth retrying (Temporary); other refusals (validation, access,
// unknown model) are a StatusError. Only the error code is kept, not the message. The SDK's own
// retries should be off (aws.NopRetryer), so that the Retrier alone decides.
func ClassifyAWS(provider string, err error) error {
	// First: the SDK reports an attempt that ran out of time as a response error of status 0
	// wrapping the context's error, which the Retrier must see to retry.
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.Response != nil && re.HTTPStatusCode() != 0 {
		status := re.HTTPStatusCode()
		code := ""
		var api smithy.APIError
		if errors.As(err, &api) {
			code = api.ErrorCode()
		}
		if RetryableStatus(status) {
			msg := fmt.Sprintf("status %d", status)
			if code != "" {
				msg += " (" + code + ")"
			}
			return Temporary(errors.New(msg), RetryAfter(re.Response.Header, time.Now()))
		}
		return &StatusError{Provider: provider, Status: status, Code: code}
	}
	var send *smithyhttp.RequestSendError
	if errors.As(err, &send) {
		return Temporary(SendError(send.Err), 0)
	}
	return fmt.Errorf("%s: %w", provider, err)
}

// NewBedrock is the Bedrock runtime client of the embeddings and chat clients (what names which
// in errors). It starts from a copy of given, else from the SDK's default chain (environment,
// shared files, the Lambda or container role) loaded for region; region, when set, wins over
// either's, and one is required. The SDK's own retries are off, so that the Retrier alone
// decides; baseEndpoint, when set, replaces the regional endpoint (a VPC endpoint).
func NewBedrock(ctx context.Context, given *aws.Config, region, baseEndpoint, what string) (*bedrockruntime.Client, error) {
	var ac aws.Config
	if given != nil {
		ac = given.Copy()
	} else {
		var err error
		if ac, err = awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(region)); err != nil {
			return nil, fmt.Errorf("%s: load AWS configuration: %w", what, err)
		}
	}
	if region != "" {
		ac.Region = region
	}
	if ac.Region == "" {
		return nil, errors.New(what + ": AWS_REGION is required")
	}
	return bedrockruntime.NewFromConfig(ac, func(o *bedrockruntime.Options) {
		o.Retryer = aws.NopRetryer{}
		if baseEndpoint != "" {
			o.BaseEndpoint = aws.String(baseEndpoint)
		}
	}), nil
}
