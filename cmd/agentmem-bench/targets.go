package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// contextMessages is how many messages a W2 read asks for.
const contextMessages = 12

// recallK is how many memories a W3 query asks for.
const recallK = 10

// target is a level the workloads run at: the store called directly, or the HTTP functions.
type target interface {
	level() string
	commit(ctx context.Context, session uuid.UUID, user, assistant string) error
	context(ctx context.Context, session uuid.UUID) error
	// recall returns the contents of the memories found, best first.
	recall(ctx context.Context, user uuid.UUID, query, mode string) ([]string, error)
}

// storeTarget calls the store as a library user would.
type storeTarget struct{ st *store.Store }

func newStoreTarget(st *store.Store) *storeTarget { return &storeTarget{st: st} }

func (t *storeTarget) level() string { return "store" }

var chatScope = memory.Scope{UserID: bench.ChatUserID.String(), Agent: benchAgent}

func (t *storeTarget) commit(ctx context.Context, session uuid.UUID, user, assistant string) error {
	_, _, err := t.st.CommitTurn(ctx, store.CommitParams{
		Scope: chatScope, SessionID: session, TTL: retention,
		Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: user}, {Role: memory.RoleAssistant, Content: assistant}},
	})
	return err
}

func (t *storeTarget) context(ctx context.Context, session uuid.UUID) error {
	c, err := t.st.GetContext(ctx, store.ContextParams{Scope: chatScope, SessionID: session, MaxMessages: contextMessages})
	if err != nil {
		return err
	}
	if len(c.Messages) != contextMessages {
		return fmt.Errorf("get-context gave %d messages, want %d", len(c.Messages), contextMessages)
	}
	return nil
}

func (t *storeTarget) recall(ctx context.Context, user uuid.UUID, query, mode string) ([]string, error) {
	p, err := withQuery(ctx, bench.Embedder{}, store.RecallParams{Scope: memory.Scope{UserID: user.String()}, Query: query, K: recallK, Mode: mode})
	if err != nil {
		return nil, err
	}
	hits, err := t.st.Recall(ctx, p)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Content
	}
	return out, nil
}

// httpTarget calls the functions over HTTP with the users' own tokens, so every request goes
// through JWT verification and row-level security.
type httpTarget struct {
	base   string
	secret string
	client *http.Client
	tokens sync.Map // user id -> token
}

func newHTTPTarget(base, secret string, conns int) *httpTarget {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 4 * conns
	tr.MaxIdleConnsPerHost = 2 * conns
	return &httpTarget{base: base, secret: secret, client: &http.Client{Transport: tr, Timeout: 60 * time.Second}}
}

func (t *httpTarget) level() string { return "http" }

func (t *httpTarget) token(user uuid.UUID) (string, error) {
	if v, ok := t.tokens.Load(user); ok {
		return v.(string), nil
	}
	tok, err := auth.MintHS256(t.secret, auth.MintClaims{Role: auth.RoleUser, Subject: user.String(), TTL: 24 * time.Hour})
	if err != nil {
		return "", err
	}
	t.tokens.Store(user, tok)
	return tok, nil
}

// statusError is an answer other than the one expected.
type statusError struct {
	status int
	body   string
}

func (e *statusError) Error() string { return fmt.Sprintf("status %d: %s", e.status, e.body) }

// post calls a function and decodes its answer into out (when not nil).
func (t *httpTarget) post(ctx context.Context, fn string, user uuid.UUID, body, out any) error {
	tok, err := t.token(user)
	if err != nil {
		return err
	}
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.base+"/v1/"+fn, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		if len(data) > 300 {
			data = data[:300]
		}
		return &statusError{status: resp.StatusCode, body: string(data)}
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

type msgIn struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func (t *httpTarget) commit(ctx context.Context, session uuid.UUID, user, assistant string) error {
	return t.post(ctx, "commit-turn", bench.ChatUserID, map[string]any{
		"session_id": session, "agent": benchAgent,
		"messages": []msgIn{{"user", user}, {"assistant", assistant}},
	}, nil)
}

func (t *httpTarget) context(ctx context.Context, session uuid.UUID) error {
	var out struct {
		Messages []json.RawMessage `json:"messages"`
	}
	err := t.post(ctx, "get-context", bench.ChatUserID, map[string]any{
		"session_id": session, "agent": benchAgent, "max_messages": contextMessages,
	}, &out)
	if err != nil {
		return err
	}
	if len(out.Messages) != contextMessages {
		return fmt.Errorf("get-context gave %d messages, want %d", len(out.Messages), contextMessages)
	}
	return nil
}

func (t *httpTarget) recall(ctx context.Context, user uuid.UUID, query, mode string) ([]string, error) {
	var out struct {
		Results []struct {
			Content string `json:"content"`
		} `json:"results"`
	}
	if err := t.post(ctx, "recall", user, map[string]any{"query": query, "k": recallK, "mode": mode}, &out); err != nil {
		return nil, err
	}
	contents := make([]string, len(out.Results))
	for i, r := range out.Results {
		contents[i] = r.Content
	}
	return contents, nil
}
