package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/config"
)

// startTimeout bounds one start-up: past it the run counts as an error.
const startTimeout = 30 * time.Second

// listFunctions names the functions of functions/*/.
func listFunctions(repo string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(repo, "functions"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(repo, "functions", e.Name(), "main.go")); err == nil {
				out = append(out, e.Name())
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// buildTags are the build tags of a deployment (scripts/build-function.sh's TAGS).
const buildTags = "lambda.norpc,grpcnotrace"

// buildFlags are the go build flags of W6's binaries.
func buildFlags(deploy bool) []string {
	if deploy {
		return []string{"-tags", buildTags, "-trimpath", "-ldflags=-s -w"}
	}
	return nil
}

// build builds the main packages pkgs into dir in one go build, each binary named after the
// last element of its package path.
func build(ctx context.Context, cfg Config, dir string, pkgs ...string) error {
	args := append([]string{"build"}, buildFlags(cfg.DeployBuild)...)
	args = append(args, "-o", dir+string(filepath.Separator))
	args = append(args, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = cfg.Repo
	cmd.Env = os.Environ()
	if cfg.DeployBuild {
		cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", strings.Join(pkgs, " "), err, b)
	}
	return nil
}

// w6Request is the first request of a function: a valid call where one is cheap to make.
func w6Request(fn string, corpus *bench.Corpus) (role string, user uuid.UUID, body map[string]any) {
	user = bench.ChatUserID
	switch fn {
	case "active-session":
		return auth.RoleUser, user, map[string]any{"agent": "bench-startup"}
	case "commit-turn":
		return auth.RoleUser, user, map[string]any{"session_id": uuid.New(), "agent": benchAgent,
			"messages": []msgIn{{"user", "hello"}, {"assistant", "hi"}}}
	case "get-context":
		return auth.RoleUser, user, map[string]any{"session_id": bench.SessionID(0), "agent": benchAgent, "max_messages": contextMessages}
	case "recall":
		q := "bababa"
		if corpus != nil {
			q = bench.GenerateQueries(bench.Stream(bench.StreamQueries), 1, corpus)[0].Text
			user = bench.UserID(bench.GenerateQueries(bench.Stream(bench.StreamQueries), 1, corpus)[0].User)
		}
		return auth.RoleUser, user, map[string]any{"query": q, "k": recallK}
	case "sweep-expired":
		return auth.RoleService, uuid.Nil, map[string]any{"dry_run": true}
	case "intents":
		return auth.RoleUser, user, map[string]any{"type": "syncSession", "session_id": bench.SessionID(0)}
	case "jobs":
		return auth.RoleService, uuid.Nil, map[string]any{"op": "list", "limit": 1}
	case "process-jobs":
		return auth.RoleService, uuid.Nil, map[string]any{"limit": 1}
	case "forget-user":
		// A user of its own, with nothing stored.
		return auth.RoleUser, uuid.New(), map[string]any{}
	case "knowledge":
		return auth.RoleUser, user, map[string]any{"op": "search", "query": "bababa"}
	case "user-state":
		return auth.RoleUser, user, map[string]any{"op": "get"}
	case "notes":
		return auth.RoleUser, user, map[string]any{"op": "read", "agent": benchAgent}
	case "mcp":
		// A tool call without initialize, as a stateless server takes it.
		return auth.RoleUser, user, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
			"params": map[string]any{"name": "recall_memory", "arguments": map[string]any{"query": "bababa", "k": recallK}}}
	}
	return auth.RoleUser, user, map[string]any{"op": "list"}
}

// functionURLEvent is a Lambda Function URL event carrying one POST.
func functionURLEvent(token string, body []byte) ([]byte, error) {
	now := time.Now()
	return json.Marshal(map[string]any{
		"version": "2.0", "routeKey": "$default", "rawPath": "/", "rawQueryString": "",
		"headers": map[string]string{
			"authorization": "Bearer " + token, "content-type": "application/json",
			// Both, as MCP's Streamable HTTP transport asks; the other functions take either.
			"accept": "application/json, text/event-stream",
			"host":   "bench.lambda-url.local", "x-forwarded-proto": "https",
		},
		"requestContext": map[string]any{
			"accountId": "anonymous", "apiId": "bench", "domainName": "bench.lambda-url.local",
			"http":      map[string]string{"method": "POST", "path": "/", "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1", "userAgent": "agentmem-bench"},
			"requestId": uuid.NewString(), "routeKey": "$default", "stage": "$default",
			"time": now.UTC().Format("02/Jan/2006:15:04:05 -0700"), "timeEpoch": now.UnixMilli(),
		},
		"body": string(body), "isBase64Encoded": false,
	})
}

// runtimeAPI is a minimal Lambda Runtime API: it hands out one event, then holds the next
// /next call open until the process is stopped, as Lambda does between invocations.
type runtimeAPI struct {
	event    []byte
	answered chan invocationResult
	handed   bool
	// asked is when the process first asked for an invocation: its initialisation is done.
	asked time.Time
}

type invocationResult struct {
	asked  time.Time
	at     time.Time
	status int
	err    string
}

func newRuntimeAPI(event []byte) *runtimeAPI {
	return &runtimeAPI{event: event, answered: make(chan invocationResult, 2)}
}

func (a *runtimeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const prefix = "/2018-06-01/runtime/"
	path := strings.TrimPrefix(r.URL.Path, prefix)
	switch {
	case r.Method == http.MethodGet && path == "invocation/next":
		if a.handed {
			<-r.Context().Done()
			return
		}
		a.handed = true
		a.asked = time.Now()
		h := w.Header()
		h.Set("Lambda-Runtime-Aws-Request-Id", "bench-invocation-1")
		h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(30*time.Second).UnixMilli(), 10))
		h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:000000000000:function:bench")
		h.Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000")
		h.Set("Content-Type", "application/json")
		w.Write(a.event) //nolint:errcheck
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/response"):
		at := time.Now()
		var resp struct {
			StatusCode int `json:"statusCode"`
		}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &resp) //nolint:errcheck
		w.WriteHeader(http.StatusAccepted)
		a.answered <- invocationResult{asked: a.asked, at: at, status: resp.StatusCode}
	case r.Method == http.MethodPost && r.URL.Path == "/2020-01-01/extension/register":
		// the functions that leave work for after their answers register an internal
		// extension at init, as on Lambda (shared/lambdaext)
		w.Header().Set("Lambda-Extension-Identifier", "bench-extension")
		w.Write([]byte(`{"functionName":"bench","functionVersion":"$LATEST","handler":"bootstrap"}`)) //nolint:errcheck
	case r.Method == http.MethodGet && r.URL.Path == "/2020-01-01/extension/event/next":
		<-r.Context().Done()
	case r.Method == http.MethodPost && (strings.HasSuffix(path, "/error") || path == "init/error"):
		b, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
		a.answered <- invocationResult{at: time.Now(), err: "function error: " + string(b)}
	default:
		http.NotFound(w, r)
	}
}

// childEnv is the environment of a started binary: only what the service reads.
func childEnv(db *benchDB, extra ...string) []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TZ=UTC",
		"DATABASE_URL=" + db.url, "SUPABASE_JWT_SECRET=" + config.LocalJWTSecret, "LOG_LEVEL=warn",
	}, extra...)
}

// peakRSSKiB reads VmHWM of a live process.
func peakRSSKiB(pid int) float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return n
		}
	}
	return 0
}

// stop ends a started binary: SIGTERM (the pool is closed), then SIGKILL after a moment.
func stop(cmd *exec.Cmd) {
	cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }() //nolint:errcheck
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		cmd.Process.Kill() //nolint:errcheck
		<-done
	}
}

// startLambda starts a function binary as Lambda would and times it to its first answer.
func startLambda(ctx context.Context, bin string, db *benchDB, event []byte) (ms, initMS, rssKiB float64, status int, err error) {
	api := newRuntimeAPI(event)
	ts := httptest.NewServer(api)
	defer ts.Close()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = childEnv(db, "AWS_LAMBDA_RUNTIME_API="+strings.TrimPrefix(ts.URL, "http://"),
		"AWS_LAMBDA_FUNCTION_NAME="+filepath.Base(bin), "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=1024",
		"AWS_REGION=us-east-1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, 0, err
	}
	exited := make(chan struct{})
	go func() {
		cmd.Process.Wait() //nolint:errcheck
		close(exited)
	}()
	defer func() {
		cmd.Process.Kill() //nolint:errcheck
		<-exited
	}()
	select {
	case res := <-api.answered:
		ms = float64(res.at.Sub(t0)) / float64(time.Millisecond)
		initMS = float64(res.asked.Sub(t0)) / float64(time.Millisecond)
		rssKiB = peakRSSKiB(cmd.Process.Pid)
		cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck
		select {
		case <-exited:
		case <-time.After(3 * time.Second):
		}
		if res.err != "" {
			return ms, initMS, rssKiB, 0, errors.New(res.err)
		}
		return ms, initMS, rssKiB, res.status, nil
	case <-exited:
		return 0, 0, 0, 0, fmt.Errorf("exited before answering: %s", lastLine(stderr.String()))
	case <-time.After(startTimeout):
		return 0, 0, 0, 0, fmt.Errorf("no answer within %s", startTimeout)
	case <-ctx.Done():
		return 0, 0, 0, 0, ctx.Err()
	}
}

// startServer starts `agentmem serve` and times it until /healthz answers 200.
func startServer(ctx context.Context, bin string, db *benchDB) (ms, initMS, rssKiB float64, status int, err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, 0, 0, err
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.CommandContext(ctx, bin, "serve")
	cmd.Env = childEnv(db, "ADDR="+addr)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	client := &http.Client{Timeout: time.Second}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, 0, err
	}
	defer stop(cmd)
	deadline := t0.Add(startTimeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		resp, err := client.Get("http://" + addr + "/healthz")
		if err == nil && initMS == 0 {
			// The first answer of any kind: the server listens.
			initMS = float64(time.Since(t0)) / float64(time.Millisecond)
		}
		if err == nil {
			io.Copy(io.Discard, resp.Body) //nolint:errcheck
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				ms = float64(time.Since(t0)) / float64(time.Millisecond)
				return ms, initMS, peakRSSKiB(cmd.Process.Pid), resp.StatusCode, nil
			}
		}
		if cmd.ProcessState != nil {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	return 0, 0, 0, 0, fmt.Errorf("/healthz did not answer 200 within %s: %s", startTimeout, lastLine(stderr.String()))
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// runW6 builds each function binary and agentmem, then starts each sz.W6Runs times.
func runW6(ctx context.Context, cfg Config, db *benchDB, corpus *bench.Corpus) (*bench.W6, error) {
	sz := cfg.Sizes
	dir, err := os.MkdirTemp("", "agentmem-bench-bin-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	r := &bench.W6{BuildFlags: append([]string{"go", "build"}, buildFlags(cfg.DeployBuild)...), Lambda: []bench.Startup{}}
	collect := func(name, bin string, start func() (float64, float64, float64, int, error)) (bench.Startup, error) {
		s := bench.Startup{Name: name, Runs: sz.W6Runs, StartAllMS: []float64{}}
		fi, err := os.Stat(bin)
		if err != nil {
			return s, err
		}
		s.BinaryBytes = fi.Size()
		var rss, inits []float64
		for i := 0; i < sz.W6Runs; i++ {
			ms, initMS, kib, status, err := start()
			if err != nil {
				s.Errors++
				if s.FirstError == "" {
					s.FirstError = err.Error()
				}
				continue
			}
			s.StartAllMS = append(s.StartAllMS, ms)
			rss = append(rss, kib)
			inits = append(inits, initMS)
			s.Status = status
		}
		s.StartMS = bench.Median(s.StartAllMS)
		s.PeakRSSKiB = bench.Median(rss)
		s.InitMS = bench.Median(inits)
		return s, nil
	}
	pkgs := []string{"./cmd/agentmem"}
	for _, fn := range sz.W6Functions {
		pkgs = append(pkgs, "./functions/"+fn)
	}
	cfg.logf("W6: building %d binaries", len(pkgs))
	if err := build(ctx, cfg, dir, pkgs...); err != nil {
		return nil, err
	}
	for _, fn := range sz.W6Functions {
		bin := filepath.Join(dir, fn)
		cfg.logf("W6: starting %s", fn)
		role, user, body := w6Request(fn, corpus)
		s, err := collect(fn, bin, func() (float64, float64, float64, int, error) {
			claims := auth.MintClaims{Role: role, TTL: time.Hour}
			if role == auth.RoleUser {
				claims.Subject = user.String()
			}
			tok, err := auth.MintHS256(config.LocalJWTSecret, claims)
			if err != nil {
				return 0, 0, 0, 0, err
			}
			if fn == "commit-turn" {
				body["session_id"] = uuid.New()
			}
			b, _ := json.Marshal(body)
			ev, err := functionURLEvent(tok, b)
			if err != nil {
				return 0, 0, 0, 0, err
			}
			return startLambda(ctx, bin, db, ev)
		})
		if err != nil {
			return nil, err
		}
		r.Lambda = append(r.Lambda, s)
	}
	bin := filepath.Join(dir, "agentmem")
	cfg.logf("W6: starting agentmem serve")
	s, err := collect("agentmem", bin, func() (float64, float64, float64, int, error) { return startServer(ctx, bin, db) })
	if err != nil {
		return nil, err
	}
	r.Server = &s
	return r, nil
}
