package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/httpapi"
	"github.com/agentmem/agentmem/shared/reqlog"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/testdb"
)

const secret = "test-secret-with-at-least-32-characters-long"

// env is one server over one test database.
type env struct {
	t      *testing.T
	db     testdb.DB
	store  *store.Store
	app    *app.App
	srv    *httpapi.Server
	h      http.Handler
	logBuf *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var (
	sharedOnce sync.Once
	sharedDB   testdb.DB
)

// viaPooler reports whether the suite runs through the transaction-mode pooler.
func viaPooler() bool { return os.Getenv("AGENTMEM_TEST_VIA_POOLER") == "1" }

// newEnv gives a server over the package's shared database (own=false; tests then use fresh
// user ids) or over a database of its own (own=true; for tests that count rows globally).
func newEnv(t *testing.T, own bool) *env {
	t.Helper()
	var db testdb.DB
	if own {
		db = testdb.New(t)
	} else {
		sharedOnce.Do(func() { sharedDB = testdb.New(&cleanupLess{T: t}) })
		db = sharedDB
	}
	url := db.URL
	if viaPooler() {
		url = db.PoolerURL()
		if url == "" {
			t.Fatalf("AGENTMEM_TEST_VIA_POOLER=1 needs %s", testdb.EnvPoolerURL)
		}
	}
	st, err := store.Open(context.Background(), store.Config{DatabaseURL: url, MaxConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	v, err := auth.NewVerifier(context.Background(), auth.Config{JWTSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	buf := &syncBuffer{}
	log := slog.New(reqlog.NewHandler(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	a := app.New(st, log, app.Config{})
	srv := httpapi.NewServer(a, v, log, httpapi.Config{AllowedOrigins: []string{"https://app.example.com"}})
	return &env{t: t, db: db, store: st, app: a, srv: srv, h: srv.Mux(), logBuf: buf}
}

// TestMain drops the package's shared database once every test is done with it.
func TestMain(m *testing.M) {
	code := m.Run()
	if sharedDB.Name != "" {
		if err := sharedDB.Drop(); err != nil {
			fmt.Fprintf(os.Stderr, "drop shared test database: %v\n", err)
		}
	}
	os.Exit(code)
}

// cleanupLess keeps the shared database for the whole package run (TestMain drops it): a
// test's Cleanup would drop it under the tests still using it.
type cleanupLess struct{ *testing.T }

func (c *cleanupLess) Cleanup(func()) {}

type user struct {
	id     uuid.UUID
	tenant string
	token  string
}

func (e *env) newUser(tenant string) user {
	e.t.Helper()
	id := uuid.New()
	tok, err := auth.MintHS256(secret, auth.MintClaims{Role: auth.RoleUser, Subject: id.String(), TenantID: tenant})
	if err != nil {
		e.t.Fatal(err)
	}
	return user{id: id, tenant: tenant, token: tok}
}

func (e *env) serviceToken() string {
	tok, err := auth.MintHS256(secret, auth.MintClaims{Role: auth.RoleService})
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

type response struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (r response) problemCode() string {
	c, _ := r.body["code"].(string)
	return c
}

// call POSTs body (a string or any JSON-marshalable value) to fn with a bearer token.
func (e *env) call(token, fn string, body any, headers ...string) response {
	e.t.Helper()
	var raw []byte
	switch b := body.(type) {
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	case nil:
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			e.t.Fatal(err)
		}
	}
	req := httptest.NewRequest(http.MethodPost, "/v1/"+fn, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	return e.do(req)
}

func (e *env) do(req *http.Request) response {
	e.t.Helper()
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	res := rec.Result()
	raw, _ := io.ReadAll(res.Body)
	out := response{status: res.StatusCode, header: res.Header, raw: raw}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			e.t.Fatalf("response is not a JSON object: %q", raw)
		}
	}
	if res.StatusCode >= 400 {
		if ct := res.Header.Get("Content-Type"); ct != "application/problem+json" {
			e.t.Errorf("error response has Content-Type %q", ct)
		}
		if out.body["request_id"] == "" || out.body["status"] != float64(res.StatusCode) {
			e.t.Errorf("problem body lacks request_id or status: %s", raw)
		}
	}
	if res.Header.Get("X-Request-Id") == "" {
		e.t.Error("response without X-Request-Id")
	}
	return out
}

// must fails the test unless the response has the status.
func (r response) must(t *testing.T, status int) response {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	return r
}

// count counts rows of a table as the superuser, bypassing row-level security.
func (e *env) count(table, where string, args ...any) int {
	e.t.Helper()
	var n int
	conn := e.adminConn()
	defer conn.Close(context.Background())
	q := "select count(*) from agentmem." + table
	if where != "" {
		q += " where " + where
	}
	if err := conn.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

var _ = strings.TrimSpace
var _ = time.Second
