package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"

	"github.com/agentmem/agentmem/shared/upstream"
)

// BedrockConfig configures Amazon Bedrock's Converse API.
type BedrockConfig struct {
	// Region is the AWS region of the Bedrock endpoint (AWS_REGION); required unless AWS
	// carries one.
	Region string
	// Model is the model id, inference profile id or ARN; default DefaultBedrockModel. The
	// model must take tools (Converse's tool use): Amazon Nova, Anthropic Claude, Mistral
	// Large, Cohere Command R and others.
	Model string
	// MaxOutputTokens caps an answer when the request sets no cap; default
	// DefaultMaxOutputTokens.
	MaxOutputTokens int
	// Timeout bounds one request; default DefaultTimeout.
	Timeout time.Duration
	// Retry bounds the retries of one Complete call. The SDK's own retries are turned off, so
	// that this policy alone decides.
	Retry RetryPolicy
	// AWS is the SDK configuration (credentials, HTTP client); default the SDK's default chain
	// (environment, shared files, the Lambda or container role) for Region.
	AWS *aws.Config
	// BaseEndpoint replaces the regional endpoint: a VPC endpoint, or a test server.
	BaseEndpoint string
	// Logger receives a warning when the provider is given up on; default none.
	Logger *slog.Logger
}

// Bedrock completes with Amazon Bedrock's Converse API (bedrock:InvokeModel permission), the
// way Bedrock documents structured output for every model that uses tools: the schema is the
// input schema of one tool, named after it, and toolChoice {"any": {}} makes the model call a
// tool, so with one tool it must answer with that tool's input, which is the answer. ("any"
// rather than {"tool": {"name"}}: with one tool they force the same call, and more models take
// "any".) A model that refuses toolChoice altogether (a ValidationException naming it) is
// asked again at once without it, the system prompt then saying to use the tool, and from then
// on for the life of the client.
type Bedrock struct {
	cfg    BedrockConfig
	client *bedrockruntime.Client
	retry  *upstream.Retrier
	log    *slog.Logger
	// noToolChoice is set once the model refused toolChoice.
	noToolChoice atomic.Bool
}

// NewBedrock checks cfg, loads the AWS configuration when none is given, and returns the
// client. It makes no request.
func NewBedrock(ctx context.Context, cfg BedrockConfig) (*Bedrock, error) {
	if cfg.Model == "" {
		cfg.Model = DefaultBedrockModel
	}
	if cfg.MaxOutputTokens <= 0 {
		cfg.MaxOutputTokens = DefaultMaxOutputTokens
	}
	if cfg.MaxOutputTokens > math.MaxInt32 {
		return nil, fmt.Errorf("bedrock chat: max output tokens %d is too large", cfg.MaxOutputTokens)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	client, err := upstream.NewBedrock(ctx, cfg.AWS, cfg.Region, cfg.BaseEndpoint, "bedrock chat")
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Bedrock{cfg: cfg, client: client, retry: newRetrier(ProviderBedrock, cfg.Retry, cfg.Timeout, cfg.Logger), log: log}, nil
}

// Provider implements Chat.
func (b *Bedrock) Provider() string { return ProviderBedrock }

// Model implements Chat.
func (b *Bedrock) Model() string { return b.cfg.Model }

// UseToolInstruction ends the system prompt when the model is not forced to call the tool.
const UseToolInstruction = "\n\nAnswer only by calling the tool %s once, with your answer as its input."

// Complete implements Chat.
func (b *Bedrock) Complete(ctx context.Context, req Request) (Completion, error) {
	if err := checkRequest(req); err != nil {
		return Completion{}, err
	}
	var schema map[string]any
	if err := json.Unmarshal(req.Schema, &schema); err != nil {
		return Completion{}, fmt.Errorf("chat request: the schema must be a JSON object: %w", err)
	}
	ctx, cancel := b.retry.Budget(ctx)
	defer cancel()
	var out Completion
	err := b.retry.Do(ctx, func(ctx context.Context) error {
		force := !b.noToolChoice.Load()
		var err error
		out, err = b.converse(ctx, req, schema, force)
		if force && refusesToolChoice(err) {
			b.noToolChoice.Store(true)
			b.log.WarnContext(ctx, "chat model refused toolChoice; asking without it from now on", "provider", ProviderBedrock)
			out, err = b.converse(ctx, req, schema, false)
		}
		var garbled *smithy.DeserializationError
		switch {
		case err == nil, errors.Is(err, ErrMalformedOutput), errors.Is(err, ErrInvalidResponse):
		case errors.As(err, &garbled):
			// A 200 whose body is not Converse's JSON.
			err = fmt.Errorf("%w: bedrock: decode response", ErrInvalidResponse)
		default:
			err = upstream.ClassifyAWS(ProviderBedrock, err)
		}
		return err
	})
	if err != nil {
		return out, fmt.Errorf("complete %s: %w", req.SchemaName, err)
	}
	return out, nil
}

// refusesToolChoice reports a ValidationException about toolChoice: the model takes tools but
// not a forced choice. The message is read to tell, never kept.
func refusesToolChoice(err error) bool {
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != "ValidationException" {
		return false
	}
	m := strings.ToLower(api.ErrorMessage())
	return strings.Contains(m, "toolchoice") || strings.Contains(m, "tool_choice") || strings.Contains(m, "tool choice")
}

// converse sends one Converse request and reads the answer.
func (b *Bedrock) converse(ctx context.Context, req Request, schema map[string]any, force bool) (Completion, error) {
	system := req.System
	if !force {
		system += fmt.Sprintf(UseToolInstruction, req.SchemaName)
	}
	msgs := make([]types.Message, len(req.Messages))
	for i, m := range req.Messages {
		role := types.ConversationRoleUser
		if m.Role == RoleAssistant {
			role = types.ConversationRoleAssistant
		}
		msgs[i] = types.Message{Role: role, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: m.Content}}}
	}
	maxTokens := req.MaxOutputTokens
	if maxTokens <= 0 || maxTokens > math.MaxInt32 {
		maxTokens = b.cfg.MaxOutputTokens
	}
	spec := types.ToolSpecification{
		Name:        aws.String(req.SchemaName),
		InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(schema)},
	}
	if req.SchemaDescription != "" {
		spec.Description = aws.String(req.SchemaDescription)
	}
	tools := &types.ToolConfiguration{Tools: []types.Tool{&types.ToolMemberToolSpec{Value: spec}}}
	if force {
		tools.ToolChoice = &types.ToolChoiceMemberAny{Value: types.AnyToolChoice{}}
	}
	res, err := b.client.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId:         aws.String(b.cfg.Model),
		System:          []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: system}},
		Messages:        msgs,
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(int32(maxTokens))},
		ToolConfig:      tools,
	})
	if err != nil {
		return Completion{}, err
	}
	out := Completion{Model: b.cfg.Model}
	if u := res.Usage; u != nil {
		out.Usage = Usage{InputTokens: int(max(aws.ToInt32(u.InputTokens), 0)), OutputTokens: int(max(aws.ToInt32(u.OutputTokens), 0))}
	}
	switch res.StopReason {
	case types.StopReasonMaxTokens, types.StopReasonModelContextWindowExceeded:
		return out, fmt.Errorf("%w: bedrock: the answer was cut at the token limit (%s)", ErrMalformedOutput, res.StopReason)
	case types.StopReasonContentFiltered, types.StopReasonGuardrailIntervened:
		return out, fmt.Errorf("%w: bedrock: the answer was filtered (%s)", ErrMalformedOutput, res.StopReason)
	case types.StopReasonMalformedModelOutput, types.StopReasonMalformedToolUse:
		return out, fmt.Errorf("%w: bedrock: %s", ErrMalformedOutput, res.StopReason)
	}
	msg, ok := res.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return out, fmt.Errorf("%w: bedrock: no message in the answer", ErrInvalidResponse)
	}
	for _, block := range msg.Value.Content {
		use, ok := block.(*types.ContentBlockMemberToolUse)
		if !ok || aws.ToString(use.Value.Name) != req.SchemaName {
			continue
		}
		if use.Value.Input == nil {
			return out, fmt.Errorf("%w: bedrock: the tool call has no input", ErrMalformedOutput)
		}
		raw, err := use.Value.Input.MarshalSmithyDocument()
		if err != nil {
			return out, fmt.Errorf("%w: bedrock: read the tool input: %v", ErrMalformedOutput, err)
		}
		obj, err := jsonObjectOf(string(raw))
		if err != nil {
			return out, fmt.Errorf("%w: bedrock: the tool input: %v", ErrMalformedOutput, err)
		}
		out.Output = obj
		return out, nil
	}
	return out, fmt.Errorf("%w: bedrock: the model did not call %s (stop reason %q)", ErrMalformedOutput, req.SchemaName, res.StopReason)
}
