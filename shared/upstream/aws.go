package upstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
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
