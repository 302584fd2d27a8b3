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
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/httpapi"
	"github.com/agentmem/agentmem/shared/mcpserver"
	"github.com/agentmem/agentmem/shared/reqlog"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

const secret = "test-secret-with-at-least-32-characters-long"

// env is one server over one test database.
type env struct {
	t      testing.TB
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

// envConfig says how buildEnv sets a server up; each field's zero value is the plain server's.
type envConfig struct {
	// own serves over a database of its own; otherwise over the package's shared database
	// (tests then use fresh user ids) unless on or url says another.
	own bool
	// on serves over on's database, as another container of the same deployment would.
	on *env
	// url serves over this database URL as it is (no test database is made).
	url string
	// reuse serves with reuse's store (and database) instead of opening a store.
	reuse *env
	// maxConns caps the store's pool; 8 when 0.
	maxConns int32
	// store sets the store's options (its URL and pool size aside); its Adapters default to the
	// names of app.Adapters.
	store store.Config
	app   app.Config
	http  httpapi.Config
	// verifier checks the tokens; nil: the HS256 verifier of secret.
	verifier httpapi.Verifier
	// log is the server's logger over the env's log buffer; nil writes JSON lines, from debug
	// up, with the request id, to it.
	log func(buf io.Writer) *slog.Logger
}

// newEnv gives a server over the package's shared database (own=false; tests then use fresh
// user ids) or over a database of its own (own=true; for tests that count rows globally).
func newEnv(t *testing.T, own bool) *env {
	t.Helper()
	return buildEnv(t, envConfig{own: own, http: httpapi.Config{AllowedOrigins: []string{"https://app.example.com"}}})
}

// buildEnv is every test server: a store over the test database (through the pooler when the
// suite runs through it), the verifier of secret, the use cases and the HTTP server, as c says.
func buildEnv(t testing.TB, c envConfig) *env {
	t.Helper()
	var db testdb.DB
	switch {
	case c.reuse != nil:
		db = c.reuse.db
	case c.url != "":
	case c.on != nil:
		db = c.on.db
	case c.own:
		db = testdb.New(t)
	default:
		sharedOnce.Do(func() { sharedDB = testdb.New(&cleanupLess{TB: t}) })
		db = sharedDB
	}
	e := &env{t: t, db: db, store: c.openStore(t, db), logBuf: &syncBuffer{}}
	e.app, e.srv = c.serve(t, e.store, e.logBuf)
	e.h = e.srv.Mux()
	return e
}

// serve is the use cases over st and their HTTP server, as c says, logging to buf.
func (c envConfig) serve(tb testing.TB, st *store.Store, buf io.Writer) (*app.App, *httpapi.Server) {
	tb.Helper()
	v := c.verifier
	if v == nil {
		hs, err := auth.NewVerifier(context.Background(), auth.Config{JWTSecret: secret})
		if err != nil {
			tb.Fatal(err)
		}
		v = hs
	}
	var log *slog.Logger
	if c.log != nil {
		log = c.log(buf)
	} else {
		log = slog.New(reqlog.NewHandler(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	}
	a := app.New(st, log, c.app)
	hc := c.http
	if hc.MCP == nil {
		hc.MCP = mcpserver.Handler(a, log)
	}
	return a, httpapi.NewServer(a, v, log, hc)
}

// openStore is the store buildEnv serves with: reuse's, or one over db (or url).
func (c envConfig) openStore(t testing.TB, db testdb.DB) *store.Store {
	t.Helper()
	if c.reuse != nil {
		return c.reuse.store
	}
	url := c.url
	if url == "" {
		url = storetest.URL(t, db, viaPooler())
	}
	cfg := c.store
	if cfg.MaxConns = c.maxConns; cfg.MaxConns == 0 {
		cfg.MaxConns = 8
	}
	if cfg.Adapters == nil {
		for name := range c.app.Adapters {
			cfg.Adapters = append(cfg.Adapters, name)
		}
		slices.Sort(cfg.Adapters)
	}
	return storetest.OpenURL(t, url, storetest.Config(func(sc *store.Config) { *sc = cfg }))
}

// discardLog drops a server's log lines.
func discardLog(io.Writer) *slog.Logger { return slog.New(slog.DiscardHandler) }

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
type cleanupLess struct{ testing.TB }

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

// wantProblem fails the test unless r is a refusal with status and code that names every field
// given (an empty one names none) among its errors; do has checked its Content-Type, request id
// and status member already.
func wantProblem(t *testing.T, r response, status int, code string, fields ...string) {
	t.Helper()
	if r.status != status || r.problemCode() != code {
		t.Fatalf("status %d code %q, want %d %q: %s", r.status, r.problemCode(), status, code, r.raw)
	}
	for _, f := range fields {
		if f != "" && !namesField(r, f) {
			t.Fatalf("problem does not name field %q: %s", f, r.raw)
		}
	}
}

// namesField reports whether a problem names field among its errors.
func namesField(r response, field string) bool {
	for _, fe := range list(r.body["errors"]) {
		if str(obj(fe)["field"]) == field {
			return true
		}
	}
	return false
}

// callCase is a row of a table of calls: who calls (token) with body, the status it answers
// and the field a refusal names ("" for none).
type callCase struct {
	name, token string
	body        any
	status      int
	field       string
}

// runCallCases calls fn once per case, each in a subtest of its name.
func runCallCases(t *testing.T, e *env, fn string, cases []callCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.call(tc.token, fn, tc.body).must(t, tc.status)
			if tc.field != "" && !namesField(r, tc.field) {
				t.Errorf("error does not name %s: %s", tc.field, r.raw)
			}
		})
	}
}

// createdOnce makes n calls at once (call(i) is the i-th) and fails the test unless exactly one
// answers 201 and every other 200: concurrent first writes create one row.
func createdOnce(t *testing.T, n int, call func(i int) response) {
	t.Helper()
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { statuses[i] = call(i).status })
	}
	wg.Wait()
	created := 0
	for _, s := range statuses {
		switch s {
		case http.StatusCreated:
			created++
		case http.StatusOK:
		default:
			t.Fatalf("statuses %v", statuses)
		}
	}
	if created != 1 {
		t.Fatalf("%d calls answered 201, want exactly 1: %v", created, statuses)
	}
}

// must fails the test unless the response has the status.
func (r response) must(t testing.TB, status int) response {
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
