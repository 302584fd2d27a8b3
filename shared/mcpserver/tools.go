// Package mcpserver is the MCP server of the mcp function: agentmem's memory tools over the
// official Go SDK (github.com/modelcontextprotocol/go-sdk), each running a use case of package
// app as the caller httpapi authenticated. It is a package of its own so that only the
// processes that serve mcp link the SDK.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/httpapi"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/reqlog"
)

// server runs the tools over the use cases.
type server struct {
	app *app.App
	log *slog.Logger
}

// Handler is the mcp function's MCP server for httpapi.Config.MCP: Streamable HTTP,
// stateless (each request in a session of its own, so any container answers any request),
// every answer one JSON document. Build it once per process.
func Handler(a *app.App, log *slog.Logger) http.Handler {
	s := &server{app: a, log: log}
	srv := mcp.NewServer(&mcp.Implementation{Name: "agentmem", Title: "agentmem memory", Version: "1"},
		&mcp.ServerOptions{Instructions: mcpInstructions})
	for _, t := range mcpToolList() {
		srv.AddTool(t.definition(), s.toolHandler(t))
	}
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, MaxRequestBodyBytes: httpapi.MaxBody})
}

// errorForLog is the cause of an error without anything a client sent.
func errorForLog(e *apierror.Error) string {
	if e.Cause != nil {
		return e.Cause.Error()
	}
	return e.Detail
}

// mcpInstructions tells an MCP client's model what the server is for.
const mcpInstructions = `agentmem keeps this user's memory across conversations. Before answering, ` +
	`recall_memory (facts about the user) and get_user_context (their preferences and your notes) ` +
	`help; store_memory keeps a new durable fact; manage_long_term_memory edits your Markdown notes ` +
	`about the user. Every tool acts for the signed-in user only.`

// mcpTool is one tool of the mcp function. Its schemas are the one source of the tool
// definitions the TypeScript client exports (clients/typescript/src/tools/definitions.ts,
// written by TestToolDefinitionsFileIsCurrent), so a model sees the same tool through MCP
// and through function calling.
type mcpTool struct {
	Name        string
	Title       string
	Description string
	// ReadOnly, Destructive and Idempotent are MCP's tool annotations.
	ReadOnly, Destructive, Idempotent bool
	// Input and Output are JSON Schemas (objects). Input lists every argument; an argument
	// it does not list is refused.
	Input, Output string
	// run decodes the arguments (by t's input schema) and runs the tool's use case for caller p.
	run func(s *server, ctx context.Context, t *mcpTool, p auth.Principal, args []byte) (any, error)
}

// definition is the tool as MCP lists it.
func (t mcpTool) definition() *mcp.Tool {
	destructive := t.Destructive
	open := false
	return &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description,
		InputSchema: json.RawMessage(t.Input), OutputSchema: json.RawMessage(t.Output),
		Annotations: &mcp.ToolAnnotations{Title: t.Title, ReadOnlyHint: t.ReadOnly, DestructiveHint: &destructive,
			IdempotentHint: t.Idempotent, OpenWorldHint: &open}}
}

// The JSON-RPC error codes of the faults a model cannot act on: a caller refused (a user
// token naming another user) and a server fault (the database unavailable, a bug).
const (
	mcpCodeForbidden = -32003
	mcpCodeServer    = jsonrpc.CodeInternalError
)

// mcpToolHandler runs tool t for the request's caller. A problem the model can act on
// (invalid arguments, not found, a conflict, a limit) is a tool error carrying the problem's
// code and detail; a caller the server refuses or a server fault is a protocol error.
func (s *server) toolHandler(t mcpTool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		p, ok := httpapi.Caller(ctx)
		if !ok { // the transport always sets it; without it nothing may run
			return nil, &jsonrpc.Error{Code: mcpCodeServer, Message: "no authenticated caller"}
		}
		args := []byte(req.Params.Arguments)
		if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
			args = []byte("{}")
		}
		out, err := t.run(s, ctx, &t, p, args)
		var code apierror.Code
		defer func() {
			attrs := []any{"fn", "mcp", "tool", t.Name, "duration_ms", float64(time.Since(start).Microseconds()) / 1000}
			if code != "" {
				attrs = append(attrs, "code", string(code))
			}
			s.log.InfoContext(ctx, "tool call", attrs...)
		}()
		if err != nil {
			ae := app.Problem(err)
			code = ae.Code
			return s.toolError(ctx, t.Name, ae)
		}
		b, err := json.Marshal(out)
		if err != nil {
			code = apierror.Internal
			return s.toolError(ctx, t.Name, apierror.As(fmt.Errorf("encode %s: %w", t.Name, err)))
		}
		res := &mcp.CallToolResult{StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
		if uc, ok := out.(app.UserContext); ok && uc.Text != "" {
			res.Content = []mcp.Content{&mcp.TextContent{Text: uc.Text}}
		}
		return res, nil
	}
}

// toolProblem is a tool error's text, as JSON: the problem's code, detail and fields.
type toolProblem struct {
	Code       apierror.Code         `json:"code"`
	Status     int                   `json:"status"`
	Detail     string                `json:"detail"`
	Errors     []apierror.FieldError `json:"errors,omitempty"`
	RetryAfter int                   `json:"retry_after,omitempty"`
	RequestID  string                `json:"request_id,omitempty"`
}

// toolError renders e as the tool's answer: a tool error when the model can act on it,
// else a protocol error (logged once, like a function's 5xx, its cause never shown).
func (s *server) toolError(ctx context.Context, tool string, e *apierror.Error) (*mcp.CallToolResult, error) {
	rid := reqlog.RequestID(ctx)
	pr := toolProblem{Code: e.Code, Status: httpapi.Status(e.Code), Detail: e.Detail, Errors: e.Fields, RequestID: rid}
	if pr.Status == 429 || pr.Status == 503 {
		pr.RetryAfter = httpapi.RetryAfter(e)
	}
	switch e.Code {
	case apierror.InvalidRequest, apierror.NotFound, apierror.Conflict, apierror.PayloadTooLarge, apierror.RateLimited:
		// The problem goes in the text: structured content must match the tool's output
		// schema, which describes its answers, and clients check it even on errors.
		b, _ := json.Marshal(pr)
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
	case apierror.Unauthenticated, apierror.Forbidden:
		data, _ := json.Marshal(pr)
		return nil, &jsonrpc.Error{Code: mcpCodeForbidden, Message: string(e.Code) + ": " + e.Detail, Data: data}
	}
	s.log.ErrorContext(ctx, "tool failed", "fn", "mcp", "tool", tool, "code", string(e.Code), "error", errorForLog(e))
	if e.Code == apierror.Internal {
		pr.Detail = "an internal error occurred; the request id identifies it in the logs"
	}
	data, _ := json.Marshal(pr)
	return nil, &jsonrpc.Error{Code: mcpCodeServer, Message: string(pr.Code) + ": " + pr.Detail, Data: data}
}

// toolArgs decodes a tool's arguments strictly into in: an argument the tool's input schema
// does not list is refused by name, then the rules of every function's body apply (types,
// NUL characters, duplicate names).
func toolArgs(t *mcpTool, args []byte, in any) error {
	if b := bytes.TrimLeft(args, " \t\r\n"); len(b) == 0 || b[0] != '{' {
		return apierror.New(apierror.InvalidRequest, "the arguments must be a JSON object")
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(args, &keys); err != nil {
		return apierror.Wrap(apierror.InvalidRequest, "the arguments are not a valid JSON object", err)
	}
	allowed := t.properties()
	var f apierror.Fields
	for k := range keys {
		if !slices.Contains(allowed, k) {
			f.Addf(k, "is not an argument of %s; its arguments are %v", t.Name, allowed)
		}
	}
	if err := f.Err(); err != nil {
		return err
	}
	return httpapi.DecodeStrict(args, in)
}

// properties are the argument names of t's input schema, sorted.
func (t *mcpTool) properties() []string {
	var sc struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal([]byte(t.Input), &sc); err != nil {
		panic("httpapi: input schema of " + t.Name + ": " + err.Error()) // a constant; a test parses each
	}
	names := make([]string, 0, len(sc.Properties))
	for k := range sc.Properties {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// toolRun is the run of a tool whose arguments are a subset of its use case's input In.
func toolRun[In, Out any](uc func(a *app.App) func(context.Context, auth.Principal, In) (Out, error),
	fix func(*In)) func(s *server, ctx context.Context, t *mcpTool, p auth.Principal, args []byte) (any, error) {
	return func(s *server, ctx context.Context, t *mcpTool, p auth.Principal, args []byte) (any, error) {
		var in In
		if err := toolArgs(t, args, &in); err != nil {
			return nil, err
		}
		if fix != nil {
			fix(&in)
		}
		return uc(s.app)(ctx, p, in)
	}
}

func ptr[T any](v T) *T { return &v }

// manageNotesInput is the input of manage_long_term_memory, named as seed agents call it.
type manageNotesInput struct {
	app.ActingFor
	Operation     *string `json:"operation"`
	Content       *string `json:"content"`
	SectionHeader *string `json:"section_header"`
	Agent         *string `json:"agent"`
}

// notesOps maps manage_long_term_memory's operations onto the notes function's.
var notesOps = map[string]string{
	"read": app.NotesOpRead, "overwrite": memory.NotesOverwrite, "append": memory.NotesAppend,
	"prepend": memory.NotesPrepend, "delete_section_by_header": memory.NotesDeleteSection,
	"replace_section_by_header": memory.NotesReplaceSection, "delete_all_notes": app.NotesOpClear,
}

func runManageNotes(s *server, ctx context.Context, t *mcpTool, p auth.Principal, args []byte) (any, error) {
	var in manageNotesInput
	if err := toolArgs(t, args, &in); err != nil {
		return nil, err
	}
	if in.Operation == nil {
		return nil, apierror.Invalid("operation", "is required: read, overwrite, append, prepend, delete_section_by_header, replace_section_by_header or delete_all_notes")
	}
	op, ok := notesOps[*in.Operation]
	if !ok {
		return nil, apierror.Invalid("operation", "must be one of read, overwrite, append, prepend, delete_section_by_header, replace_section_by_header, delete_all_notes")
	}
	n := app.NotesInput{ActingFor: in.ActingFor, Op: op, Agent: in.Agent, Content: in.Content, Section: in.SectionHeader}
	switch op {
	case app.NotesOpRead:
		return s.app.ReadNotes(ctx, p, n)
	case app.NotesOpClear:
		return s.app.ClearNotes(ctx, p, n)
	}
	out, err := s.app.EditNotes(ctx, p, op, n)
	if err != nil {
		// The notes function names the section field "section"; the tool calls it section_header.
		ae := app.Problem(err)
		if ae.Code == apierror.InvalidRequest {
			for i := range ae.Fields {
				if ae.Fields[i].Field == "section" {
					ae.Fields[i].Field = "section_header"
				}
			}
		}
		return out, ae
	}
	return out, nil
}

// commitTurnInput is the input of commit_turn: commit-turn's body, with the Idempotency-Key
// as an argument.
type commitTurnInput struct {
	app.CommitTurnInput
	IdempotencyKey *string `json:"idempotency_key"`
}

func runCommitTurn(s *server, ctx context.Context, t *mcpTool, p auth.Principal, args []byte) (any, error) {
	var in commitTurnInput
	if err := toolArgs(t, args, &in); err != nil {
		return nil, err
	}
	if in.IdempotencyKey != nil {
		in.Idempotency = &app.IdempotencyKey{Key: *in.IdempotencyKey, Present: true, RequestHash: app.RequestHash(args)}
	}
	out, err := s.app.CommitTurn(ctx, p, in.CommitTurnInput)
	if err != nil {
		return nil, err
	}
	return struct {
		memory.CommitResult
		Replayed bool `json:"replayed"`
	}{out.CommitResult, out.Replayed}, nil
}

func runGetContext(s *server, ctx context.Context, t *mcpTool, p auth.Principal, args []byte) (any, error) {
	var in app.GetContextInput
	if err := toolArgs(t, args, &in); err != nil {
		return nil, err
	}
	out, err := s.app.GetContext(ctx, p, in)
	if err != nil {
		return nil, err
	}
	return app.RenderContext(out), nil
}

// The schema fragments every tool shares.
const (
	schemaActing = `"user_id": {"type": "string", "description": "Only with a service token: the user to act for. Leave it out with a user's token; the tools always act as the token's user."},
    "tenant_id": {"type": "string", "description": "Only with a service token: the user's tenant."}`
	schemaAgent         = `"agent": {"type": "string", "pattern": "^[A-Za-z0-9_.:-]{1,64}$", "description": "The agent whose memory this is (1 to 64 of A-Z a-z 0-9 _ . : -); default \"default\"."}`
	schemaIncludeShared = `"include_shared": {"type": "boolean", "description": "false leaves out the memories shared by every user of the organisation; default true."}`
	schemaMetadata      = `"metadata": {"type": "object", "description": "Optional JSON object stored with it, e.g. {\"kind\": \"preference\"}; up to 16 KiB."}`
	schemaHit           = `{"type": "object", "properties": {
      "id": {"type": "string"}, "content": {"type": "string"}, "score": {"type": "number"},
      "relevance": {"type": "number", "description": "0 to 1, comparable across queries"},
      "metadata": {}, "created_at": {"type": "string", "format": "date-time"},
      "source": {"type": "string", "enum": ["memory", "message"]},
      "shared": {"type": "boolean", "description": "true for a memory shared by every user of the organisation (read-only); absent for the user's own"},
      "session_id": {"type": "string"}, "seq": {"type": "integer"}, "role": {"type": "string"}},
    "required": ["id", "content", "score", "created_at"]}`
	schemaNotes = `{"type": "object", "properties": {
    "agent": {"type": "string"},
    "content": {"type": "string", "description": "The notes (Markdown) after the operation"},
    "updated_at": {"type": ["string", "null"], "format": "date-time"},
    "chars": {"type": "integer"}, "max_chars": {"type": "integer", "description": "The size limit of the notes in characters"},
    "section_created": {"type": "boolean", "description": "replace_section_by_header: the section did not exist and was added at the end"},
    "deleted": {"type": "boolean", "description": "delete_all_notes: there were notes to delete"}},
  "required": ["agent"]}`
)

// mcpToolList gives the tools of the mcp function, in the order they are listed.
func mcpToolList() []mcpTool {
	return []mcpTool{
		{
			Name:  "store_memory",
			Title: "Store a memory",
			Description: "Remember one durable fact about the user for later conversations, such as a preference, " +
				"a personal detail or a decision (\"User prefers metric units.\"). Write it as a short standalone " +
				"sentence. Storing the same fact again keeps one memory (merged: true). Do not store small talk " +
				"or things only true for this conversation.",
			Idempotent: true,
			Input: `{"type": "object", "properties": {
    "content": {"type": "string", "minLength": 1, "description": "The fact, one short standalone sentence."},
    ` + schemaMetadata + `,
    ` + schemaAgent + `,
    "ttl_seconds": {"type": "integer", "minimum": 1, "description": "Forget it after this many seconds; default: the deployment's retention."},
    ` + schemaActing + `},
  "required": ["content"], "additionalProperties": false}`,
			Output: `{"type": "object", "properties": {
    "id": {"type": "string", "description": "The memory's id (forget_memory takes it)"},
    "merged": {"type": "boolean", "description": "true when the fact went into a memory the user already had"},
    "content_changed": {"type": "boolean", "description": "true when that memory now reads as this fact; false when it kept its own wording"}},
  "required": ["id", "merged", "content_changed"]}`,
			run: toolRun(func(a *app.App) func(context.Context, auth.Principal, app.CreateMemoryInput) (app.CreateMemoryOutput, error) {
				return a.CreateMemory
			}, nil),
		},
		{
			Name:  "recall_memory",
			Title: "Recall memories",
			Description: "Search what is remembered about the user (facts stored with store_memory or learned from " +
				"past conversations), best match first, with the memories shared by every user of their organisation " +
				"(marked shared: true, read-only). Use it before answering anything that may depend on the " +
				"user's preferences, history or personal details. Ask in words close to how the fact would be " +
				"written (\"preferred units\").",
			ReadOnly: true, Idempotent: true,
			Input: `{"type": "object", "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": 4096, "description": "What to look for."},
    "k": {"type": "integer", "minimum": 1, "maximum": 100, "description": "How many results at most; default 10."},
    ` + schemaAgent + `,
    "mode": {"type": "string", "enum": ["hybrid", "vector", "text"], "description": "hybrid (default) matches words and meaning; text only words; vector only meaning."},
    "filter": {"type": "object", "description": "Keep memories whose metadata has exactly these top-level values, e.g. {\"kind\": \"preference\"}."},
    "min_relevance": {"type": "number", "minimum": 0, "maximum": 1, "description": "Leave out results less relevant than this (0 to 1)."},
    ` + schemaIncludeShared + `,
    ` + schemaActing + `},
  "required": ["query"], "additionalProperties": false}`,
			Output: `{"type": "object", "properties": {"results": {"type": "array", "items": ` + schemaHit + `}}, "required": ["results"]}`,
			run: toolRun(func(a *app.App) func(context.Context, auth.Principal, app.RecallInput) (app.RecallResults, error) {
				return a.Recall
			}, func(in *app.RecallInput) { in.Source = ptr("memories") }),
		},
		{
			Name:  "search_knowledge_base",
			Title: "Search the knowledge base",
			Description: "Search the organisation's shared knowledge base (documentation, policies, product facts " +
				"ingested by the operator), best match first. Use it for questions about the product or " +
				"policies rather than about the user; it holds nothing personal.",
			ReadOnly: true, Idempotent: true,
			Input: `{"type": "object", "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": 4096, "description": "The question or words to look for."},
    "k": {"type": "integer", "minimum": 1, "maximum": 50, "description": "How many passages at most; default 5."},
    "mode": {"type": "string", "enum": ["hybrid", "vector", "text"], "description": "hybrid (default), vector or text."},
    "tenant_id": {"type": "string", "description": "Only with a service token: the tenant whose knowledge base to search."}},
  "required": ["query"], "additionalProperties": false}`,
			Output: `{"type": "object", "properties": {"results": {"type": "array", "items": {"type": "object", "properties": {
      "id": {"type": "string"}, "source": {"type": "string", "description": "The document it comes from"},
      "chunk_index": {"type": "integer"}, "content": {"type": "string"}, "score": {"type": "number"}, "metadata": {}},
    "required": ["id", "source", "content", "score"]}}}, "required": ["results"]}`,
			run: toolRun(func(a *app.App) func(context.Context, auth.Principal, app.KnowledgeSearchInput) (app.KnowledgeResults, error) {
				return a.SearchKnowledge
			}, func(in *app.KnowledgeSearchInput) { in.Op = app.KnowledgeOpSearch }),
		},
		{
			Name:  "get_user_context",
			Title: "Get the user's context",
			Description: "A short text about the user: their current mode (plan or status), what is stored about " +
				"them as key/value memory (preferences, plan, usage) and your long-term notes about them. Call it " +
				"once at the start of a conversation to personalise answers.",
			ReadOnly: true, Idempotent: true,
			Input: `{"type": "object", "properties": {
    ` + schemaAgent + `,
    "max_tokens": {"type": "integer", "minimum": 1, "maximum": 4000, "description": "Cut the text to about this many tokens; default 500."},
    ` + schemaActing + `},
  "additionalProperties": false}`,
			Output: `{"type": "object", "properties": {
    "agent": {"type": "string"},
    "text": {"type": "string", "description": "The summary; empty when nothing is stored about the user"},
    "token_estimate": {"type": "integer"}, "truncated": {"type": "boolean"}},
  "required": ["agent", "text", "token_estimate", "truncated"]}`,
			run: toolRun(func(a *app.App) func(context.Context, auth.Principal, app.UserContextInput) (app.UserContext, error) {
				return a.UserContext
			}, nil),
		},
		{
			Name:  "manage_long_term_memory",
			Title: "Manage long-term notes",
			Description: "Read and edit your long-term Markdown notes about the user (one document per agent), " +
				"organised in sections under headings such as \"## Preferences\". operation: read; overwrite " +
				"(replace everything with content); append or prepend content; replace_section_by_header " +
				"(replace the section under section_header with content, adding it at the end when missing); " +
				"delete_section_by_header; delete_all_notes. Read before editing; keep notes short, the size " +
				"is limited (max_chars).",
			Destructive: true,
			Input: `{"type": "object", "properties": {
    "operation": {"type": "string", "enum": ["read", "overwrite", "append", "prepend", "delete_section_by_header", "replace_section_by_header", "delete_all_notes"], "description": "What to do."},
    "content": {"type": "string", "description": "Markdown for overwrite, append, prepend and replace_section_by_header; for replace_section_by_header, the section's body without its heading."},
    "section_header": {"type": "string", "description": "For the *_by_header operations: the heading line (\"## Preferences\") or its text (\"Preferences\")."},
    ` + schemaAgent + `,
    ` + schemaActing + `},
  "required": ["operation"], "additionalProperties": false}`,
			Output: schemaNotes,
			run:    runManageNotes,
		},
		{
			Name:  "get_context",
			Title: "Get a session's context",
			Description: "Everything for the next prompt of a conversation in one call: the most recent messages " +
				"of the session that fit a token budget, memories recalled for query, the user's key/value memory, " +
				"mode and notes. format gives the messages as stored (raw) or as the OpenAI, Anthropic or " +
				"LangChain APIs take them.",
			ReadOnly: true, Idempotent: true,
			Input: `{"type": "object", "properties": {
    "session_id": {"type": "string", "format": "uuid", "description": "The conversation's id."},
    ` + schemaAgent + `,
    "max_messages": {"type": "integer", "minimum": 1, "maximum": 500, "description": "At most this many recent messages; default 20."},
    "max_tokens": {"type": "integer", "minimum": 1, "description": "Drop the oldest messages until the estimate fits."},
    "query": {"type": "string", "maxLength": 4096, "description": "Recall memories for this text."},
    "recall_k": {"type": "integer", "minimum": 0, "maximum": 50, "description": "How many memories for query; default 5."},
    "format": {"type": "string", "enum": ["raw", "openai", "anthropic", "langchain"], "description": "Default raw."},
    "since": {"type": "string", "format": "date-time", "description": "Only messages created at or after this time (RFC 3339)."},
    "answers_only": {"type": "boolean", "description": "Leave out tool calls and tool results."},
    "user_context": {"type": "boolean", "description": "Add user_context, the text get_user_context gives."},
    ` + schemaIncludeShared + `,
    ` + schemaActing + `},
  "required": ["session_id"], "additionalProperties": false}`,
			Output: `{"type": "object", "properties": {
    "session_id": {"type": "string"},
    "messages": {"type": "array", "items": {"type": "object"}},
    "system": {"type": ["string", "null"], "description": "anthropic format: the system text"},
    "memories": {"type": "array", "items": {"type": "object", "properties": {"shared": {"type": "boolean", "description": "true for a memory shared by every user of the organisation"}}}},
    "user_memory": {"type": "object"}, "state": {"type": ["string", "null"]}, "notes": {"type": ["string", "null"]},
    "summary": {"type": ["object", "null"]}, "user_context": {"type": "string"},
    "usage": {"type": "object", "properties": {"messages": {"type": "integer"}, "token_estimate": {"type": "integer"}, "truncated": {"type": "boolean"}}}},
  "required": ["session_id", "messages", "memories", "usage"]}`,
			run: runGetContext,
		},
		{
			Name:  "commit_turn",
			Title: "Commit a turn",
			Description: "Append one turn of the conversation (the user's message, your answer, tool calls and " +
				"results) to a session, so later calls of get_context and search_history see it, with optional " +
				"long-term memories. The session is created on first commit. Give idempotency_key (or message ids) " +
				"so a retried commit is stored once.",
			Idempotent: true,
			Input: `{"type": "object", "properties": {
    "session_id": {"type": "string", "format": "uuid", "description": "The conversation's id; a new id starts a session."},
    ` + schemaAgent + `,
    "messages": {"type": "array", "minItems": 1, "maxItems": 100, "description": "The turn's messages, in order.", "items": {"type": "object", "properties": {
      "role": {"type": "string", "enum": ["user", "assistant", "system", "tool"]},
      "content": {"description": "Text, or OpenAI-style content parts ([{\"type\": \"text\", \"text\": \"...\"}]); may be empty only for an assistant message with tool_calls.",
        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "object", "properties": {"type": {"type": "string"}}, "required": ["type"]}}]},
      "id": {"type": "string", "description": "Client-chosen id: a message whose id is stored already is not stored again."},
      "name": {"type": "string"},
      "tool_calls": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}, "type": {"type": "string", "enum": ["function"]},
        "function": {"type": "object", "properties": {"name": {"type": "string"}, "arguments": {"type": "string"}}, "required": ["name", "arguments"]}}, "required": ["id", "type", "function"]}},
      "tool_call_id": {"type": "string", "description": "For a tool message: the call it answers."},
      ` + schemaMetadata + `,
      "created_at": {"type": "string", "format": "date-time", "description": "Service tokens only: when the message was said."}},
      "required": ["role", "content"], "additionalProperties": false}},
    "memories": {"type": "array", "description": "Long-term facts learned in this turn.", "items": {"type": "object", "properties": {
      "content": {"type": "string", "minLength": 1}, ` + schemaMetadata + `}, "required": ["content"], "additionalProperties": false}},
    "ttl_seconds": {"type": "integer", "minimum": 1, "description": "Forget the turn after this many seconds; default: the deployment's retention."},
    "extract": {"type": "boolean", "description": "false keeps this turn out of automatic fact extraction."},
    "idempotency_key": {"type": "string", "minLength": 1, "maxLength": 255, "description": "The same key and arguments again return the first answer and store nothing new."},
    ` + schemaActing + `},
  "required": ["session_id", "messages"], "additionalProperties": false}`,
			Output: `{"type": "object", "properties": {
    "session_id": {"type": "string"},
    "messages": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}, "seq": {"type": "integer"}, "created_at": {"type": "string"}}, "required": ["id", "seq"]}},
    "memories": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}},
    "replayed": {"type": "boolean", "description": "true when this answer is replayed for a retry with the same idempotency_key: nothing new was stored"}},
  "required": ["session_id", "messages", "memories", "replayed"]}`,
			run: runCommitTurn,
		},
		{
			Name:  "forget_memory",
			Title: "Forget a memory",
			Description: "Delete one long-term memory of the user by its id (from recall_memory or list_memories), " +
				"when the user asks to forget it or it is wrong. It cannot be undone. An id that is not the " +
				"user's memory is not_found; a shared memory (shared: true) is read-only and refused.",
			Destructive: true, Idempotent: true,
			Input: `{"type": "object", "properties": {
    "id": {"type": "string", "format": "uuid", "description": "The memory's id."},
    ` + schemaActing + `},
  "required": ["id"], "additionalProperties": false}`,
			Output: `{"type": "object", "properties": {"deleted": {"type": "boolean"}}, "required": ["deleted"]}`,
			run: toolRun(func(a *app.App) func(context.Context, auth.Principal, app.OneMemoryInput) (app.MemoryDeleted, error) {
				return a.DeleteMemory
			}, nil),
		},
		{
			Name:  "list_memories",
			Title: "List memories",
			Description: "List the user's long-term memories, newest first, a page at a time (next_cursor gives " +
				"the next page). Use it to review everything remembered; to find something, recall_memory is better.",
			ReadOnly: true, Idempotent: true,
			Input: `{"type": "object", "properties": {
    ` + schemaAgent + `,
    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "Page size; default 20."},
    "cursor": {"type": "string", "description": "next_cursor of the previous page."},
    ` + schemaActing + `},
  "additionalProperties": false}`,
			Output: `{"type": "object", "properties": {
    "items": {"type": "array", "items": {"type": "object", "properties": {
      "id": {"type": "string"}, "content": {"type": "string"}, "metadata": {}, "agent": {"type": ["string", "null"]},
      "created_at": {"type": "string"}, "updated_at": {"type": "string"}, "expires_at": {"type": "string"}},
      "required": ["id", "content"]}},
    "next_cursor": {"type": ["string", "null"]}},
  "required": ["items", "next_cursor"]}`,
			run: toolRun(func(a *app.App) func(context.Context, auth.Principal, app.ListMemoriesInput) (app.MemoryList, error) {
				return a.ListMemories
			}, nil),
		},
		{
			Name:  "search_history",
			Title: "Search past conversations",
			Description: "Search the user's past messages across every conversation, best match first, each with " +
				"its session_id, seq and role. Use it when the user refers to something said earlier (\"what did " +
				"I tell you about my trip?\"); since/until bound the time, neighbours adds the turns around each hit.",
			ReadOnly: true, Idempotent: true,
			Input: `{"type": "object", "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": 4096, "description": "What to look for."},
    "k": {"type": "integer", "minimum": 1, "maximum": 100, "description": "How many messages at most; default 10."},
    ` + schemaAgent + `,
    "mode": {"type": "string", "enum": ["hybrid", "vector", "text"], "description": "Default hybrid."},
    "role": {"type": "string", "enum": ["user", "assistant", "system", "tool"], "description": "Only messages of this role."},
    "speaker": {"type": "string", "description": "Only messages of this speaker (the message's name)."},
    "since": {"type": "string", "format": "date-time", "description": "Only messages created at or after this time (RFC 3339)."},
    "until": {"type": "string", "format": "date-time", "description": "Only messages created before this time (RFC 3339)."},
    "neighbours": {"type": "integer", "minimum": 0, "maximum": 5, "description": "Add this many turns on each side of each hit."},
    "min_relevance": {"type": "number", "minimum": 0, "maximum": 1, "description": "Leave out results less relevant than this (0 to 1)."},
    ` + schemaActing + `},
  "required": ["query"], "additionalProperties": false}`,
			Output: `{"type": "object", "properties": {"results": {"type": "array", "items": ` + schemaHit + `}}, "required": ["results"]}`,
			run: toolRun(func(a *app.App) func(context.Context, auth.Principal, app.RecallInput) (app.RecallResults, error) {
				return a.Recall
			}, func(in *app.RecallInput) { in.Source = ptr("messages") }),
		},
	}
}
