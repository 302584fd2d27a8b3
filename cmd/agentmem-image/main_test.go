package main

import (
	"archive/tar"
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/config"
	"github.com/agentmem/agentmem/shared/embedding/embeddingtest"
	"github.com/agentmem/agentmem/shared/lambdaext"
	"github.com/agentmem/agentmem/shared/lambdaext/lambdaexttest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// built is one image for the whole package: building it compiles agentmem.
var built struct {
	once sync.Once
	dir  string
	res  Result
	err  error
}

// buildImage builds the image for this machine's architecture (so that its binary runs here),
// pushing it to an in-memory registry (go-containerregistry's, the registry API) too.
func buildImage(t *testing.T) (Result, string) {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "agentmem-image-test-")
		if built.err != nil {
			return
		}
		reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
		defer reg.Close()
		host := strings.TrimPrefix(reg.URL, "http://")
		built.res, built.err = Build(context.Background(), Params{
			Arch: runtime.GOARCH, OutDir: built.dir, Tag: "agentmem:test", Push: host + "/agentmem:test",
		})
		if built.err != nil {
			return
		}
		// What the registry holds is what was built.
		ref, err := name.ParseReference(host + "/agentmem:test")
		if err != nil {
			built.err = err
			return
		}
		desc, err := remote.Head(ref)
		if err != nil {
			built.err = err
			return
		}
		if desc.Digest.String() != built.res.Digest {
			built.err = errors.New("the registry holds " + desc.Digest.String() + ", built " + built.res.Digest)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.res, built.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// The OCI layout and the tarball hold the same image: one layer on an empty base, agentmem as
// the entry point, serve as the default command, a non-root user, and the SBOM lists its
// modules.
func TestImageShape(t *testing.T) {
	res, _ := buildImage(t)
	lp, err := layout.FromPath(res.Layout)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	man, err := idx.IndexManifest()
	if err != nil || len(man.Manifests) != 1 {
		t.Fatalf("layout index: %+v, %v; want one image", man, err)
	}
	img, err := lp.Image(man.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	fromTar, err := tarball.ImageFromPath(res.Tarball, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := img.Digest(); err != nil || d.String() != res.Digest {
		t.Errorf("layout's image digest %v, %v; want %s", d, err, res.Digest)
	}
	// The tarball (docker save's format) keeps the configuration, not the manifest.
	configs := make([]v1.Hash, 2)
	for i, im := range []v1.Image{img, fromTar} {
		if configs[i], err = im.ConfigName(); err != nil {
			t.Fatal(err)
		}
	}
	if configs[0] != configs[1] {
		t.Errorf("the layout's configuration %s, the tarball's %s", configs[0], configs[1])
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Architecture != runtime.GOARCH || cf.OS != "linux" {
		t.Errorf("platform %s/%s", cf.OS, cf.Architecture)
	}
	if got := strings.Join(cf.Config.Entrypoint, " ") + " | " + strings.Join(cf.Config.Cmd, " "); got != "/agentmem | serve" {
		t.Errorf("entry point and command %q", got)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("user %q, want nonroot", cf.Config.User)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Errorf("%d layers, %v; want 1 on an empty base", len(layers), err)
	}

	var sbom struct {
		SPDXVersion string `json:"spdxVersion"`
		Packages    []struct {
			Name        string `json:"name"`
			VersionInfo string `json:"versionInfo"`
		} `json:"packages"`
	}
	raw, err := os.ReadFile(res.SBOM)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &sbom); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, p := range sbom.Packages {
		found[p.Name] = true
	}
	for _, want := range []string{"github.com/jackc/pgx/v5", "github.com/aws/aws-lambda-go", "ca-certificates", "go"} {
		if !found[want] {
			t.Errorf("SBOM (%s) lists no %s", sbom.SPDXVersion, want)
		}
	}
}

// extract writes the image's filesystem to a new folder and returns it.
func extract(t *testing.T, res Result) string {
	t.Helper()
	img, err := tarball.ImageFromPath(res.Tarball, nil)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(root, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
	for _, f := range []string{"agentmem", "etc/ssl/certs/ca-certificates.crt", "etc/passwd"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("image lacks /%s: %v", f, err)
		}
	}
	return root
}

// imageEnv is the environment of a run of the image's binary: the image's own settings, a
// test database and the local token secret.
func imageEnv(dbURL string, extra ...string) []string {
	return append([]string{
		"PATH=/", "PORT=8080", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
		"DATABASE_URL=" + dbURL, "SUPABASE_JWT_SECRET=" + config.LocalJWTSecret, "LOG_LEVEL=warn",
	}, extra...)
}

func userToken(t *testing.T) string {
	t.Helper()
	tok, err := auth.MintHS256(config.LocalJWTSecret, auth.MintClaims{Role: auth.RoleUser, Subject: uuid.NewString()})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// The image's default command serves every function and /healthz on ADDR (the address it
// prints is the one bound), and SIGTERM lets it finish and exit 0.
func TestImageServes(t *testing.T) {
	res, _ := buildImage(t)
	root := extract(t, res)
	db := testdb.New(t)

	cmd := exec.Command(filepath.Join(root, "agentmem"), "serve")
	cmd.Dir = root
	cmd.Env = imageEnv(db.URL, "ADDR=127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	t.Cleanup(func() {
		cmd.Process.Kill() //nolint:errcheck
	})
	lines := bufio.NewScanner(stderr)
	addr := ""
	for lines.Scan() {
		if m := regexp.MustCompile(`serving \d+ functions at http://(127\.0\.0\.1:\d+)/v1/`).FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
			break
		}
		t.Log(lines.Text())
	}
	if addr == "" {
		t.Fatal("the server printed no address")
	}
	var rest strings.Builder
	go func() {
		io.Copy(&rest, stderr) //nolint:errcheck
		done <- cmd.Wait()
	}()

	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok\n" {
		t.Errorf("GET /healthz: %d %q", resp.StatusCode, body)
	}

	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/active-session", strings.NewReader(`{"agent": "demo"}`))
	req.Header.Set("Authorization", "Bearer "+userToken(t))
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		SessionID string `json:"session_id"`
		Created   bool   `json:"created"`
	}
	err = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated || out.SessionID == "" || !out.Created {
		t.Errorf("POST /v1/active-session: %d %+v %v", resp.StatusCode, out, err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("after SIGTERM: %v; stderr: %s", err, rest.String())
	}
	if !strings.Contains(rest.String(), "agentmem: stopped") {
		t.Errorf("no orderly stop on SIGTERM; stderr: %s", rest.String())
	}
}

// runtimeAPI is a Lambda Runtime API (the 2018-06-01 interface a function's runtime polls):
// it hands out queued events and records what the function answers.
type runtimeAPI struct {
	events  chan invocation
	answers chan answer
}

type invocation struct {
	id    string
	event string
}

type answer struct {
	id, kind string // kind: response, error, init-error
	body     []byte
}

func newRuntimeAPI(t *testing.T) (*runtimeAPI, string) {
	api := &runtimeAPI{events: make(chan invocation, 4), answers: make(chan answer, 4)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", func(w http.ResponseWriter, r *http.Request) {
		select {
		case inv := <-api.events:
			w.Header().Set("Lambda-Runtime-Aws-Request-Id", inv.id)
			w.Header().Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(30*time.Second).UnixMilli(), 10))
			w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:eu-west-1:123456789012:function:agentmem-recall")
			w.Header().Set("Lambda-Runtime-Trace-Id", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1")
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, inv.event) //nolint:errcheck
		case <-r.Context().Done():
		}
	})
	record := func(kind string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			api.answers <- answer{id: r.PathValue("id"), kind: kind, body: body}
			w.WriteHeader(http.StatusAccepted)
			io.WriteString(w, `{"status":"OK"}`) //nolint:errcheck
		}
	}
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", record("response"))
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", record("error"))
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", record("init-error"))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return api, strings.TrimPrefix(srv.URL, "http://")
}

func (api *runtimeAPI) invoke(t *testing.T, event string) answer {
	t.Helper()
	id := uuid.NewString()
	api.events <- invocation{id: id, event: event}
	select {
	case a := <-api.answers:
		if a.id != id && a.kind != "init-error" {
			t.Fatalf("answer for %s, want %s", a.id, id)
		}
		return a
	case <-time.After(time.Minute):
		t.Fatal("the function did not answer within a minute")
		return answer{}
	}
}

// startLambda starts the image's agentmem with args and env, as Lambda starts a function; it
// is killed when the test ends, and its stderr logged if the test failed.
func startLambda(t *testing.T, root string, args, env []string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(root, "agentmem"), args...)
	cmd.Dir = root
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill() //nolint:errcheck
		cmd.Wait()         //nolint:errcheck
		if t.Failed() {
			t.Logf("stderr: %s", stderr.String())
		}
	})
}

// functionURLEvent is a Lambda Function URL request (payload format 2.0) for POST / with body.
func functionURLEvent(token, body string) string {
	ev := map[string]any{
		"version": "2.0", "routeKey": "$default", "rawPath": "/", "rawQueryString": "",
		"headers": map[string]string{
			"authorization": "Bearer " + token, "content-type": "application/json",
			"host": "abc.lambda-url.eu-west-1.on.aws",
		},
		"requestContext": map[string]any{
			"accountId": "anonymous", "apiId": "abc", "domainName": "abc.lambda-url.eu-west-1.on.aws",
			"http":      map[string]string{"method": "POST", "path": "/", "protocol": "HTTP/1.1", "sourceIp": "203.0.113.7", "userAgent": "test"},
			"requestId": uuid.NewString(), "routeKey": "$default", "stage": "$default",
			"time": "22/Nov/2026:09:45:00 +0000", "timeEpoch": time.Now().UnixMilli(),
		},
		"body": body, "isBase64Encoded": false,
	}
	raw, _ := json.Marshal(ev)
	return string(raw)
}

// `agentmem lambda <name>`, the image's Lambda mode, serves that function through the Lambda
// Runtime API: a Function URL request gets the function's answer, an event it does not take
// is reported as an invocation error, and an unknown function stops it at once.
func TestImageUnderLambdaRuntimeAPI(t *testing.T) {
	res, _ := buildImage(t)
	root := extract(t, res)
	db := testdb.New(t)

	for _, tc := range []struct {
		name string
		args []string
		env  []string
	}{
		{"named in the command", []string{"lambda", "recall"}, nil},
		{"named by AGENTMEM_FUNCTION", []string{"lambda"}, []string{"AGENTMEM_FUNCTION=recall"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A Runtime API of its own: the killed process of the case before may still hold
			// a long poll on the shared one's next invocation, and would take this case's event.
			api, addr := newRuntimeAPI(t)
			startLambda(t, root, tc.args, append(imageEnv(db.URL, "AWS_LAMBDA_RUNTIME_API="+addr,
				"AWS_LAMBDA_FUNCTION_NAME=agentmem-recall", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256",
				"AWS_LAMBDA_FUNCTION_VERSION=$LATEST"), tc.env...))

			a := api.invoke(t, functionURLEvent(userToken(t), `{"query": "metric units", "agent": "demo"}`))
			var out struct {
				StatusCode int               `json:"statusCode"`
				Headers    map[string]string `json:"headers"`
				Body       string            `json:"body"`
			}
			if err := json.Unmarshal(a.body, &out); err != nil || a.kind != "response" {
				t.Fatalf("%s %s: %v", a.kind, a.body, err)
			}
			var recall struct {
				Results []any `json:"results"`
			}
			if out.StatusCode != 200 || json.Unmarshal([]byte(out.Body), &recall) != nil || recall.Results == nil {
				t.Errorf("recall through the Runtime API: %d %s", out.StatusCode, out.Body)
			}

			a = api.invoke(t, functionURLEvent("not-a-token", `{"query": "x"}`))
			if json.Unmarshal(a.body, &out) != nil || out.StatusCode != 401 || !strings.Contains(out.Headers["Content-Type"], "problem+json") {
				t.Errorf("a bad token through the Runtime API: %s %s", a.kind, a.body)
			}

			if a = api.invoke(t, `{"hello": "world"}`); a.kind != "error" {
				t.Errorf("an event that is no HTTP request: %s %s, want an invocation error", a.kind, a.body)
			}
		})
	}

	t.Run("unknown function", func(t *testing.T) {
		_, addr := newRuntimeAPI(t)
		cmd := exec.Command(filepath.Join(root, "agentmem"), "lambda", "no-such-function")
		cmd.Env = imageEnv(db.URL, "AWS_LAMBDA_RUNTIME_API="+addr)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || !strings.Contains(string(out), `unknown function "no-such-function"`) {
			t.Errorf("lambda no-such-function: %v, %s", err, out)
		}
	})
}

// sizeTolerance is how far a documented size may be from the one measured: builds differ a
// little from machine to machine and from commit to commit, not by half.
const sizeTolerance = 0.10

// The sizes the documents give are those of the image and binary this test builds (for the
// machine's architecture): docs/deploy.md's image, unpacked and compressed, and the agentmem
// binary of docs/benchmarks.md's W6 note, each within sizeTolerance. Building for the other
// architecture too would double the test's slowest step; its figures are written by the same
// command (make image ARCH=...).
func TestDocumentedSizes(t *testing.T) {
	res, _ := buildImage(t)
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	near := func(what string, doc string, measured float64) {
		t.Helper()
		got, err := strconv.ParseFloat(doc, 64)
		if err != nil || got < measured*(1-sizeTolerance) || got > measured*(1+sizeTolerance) {
			t.Errorf("%s: documented %s MiB, measured %.1f MiB (tolerance %.0f%%)", what, doc, measured, 100*sizeTolerance)
		}
	}
	deploy, err := os.ReadFile("../../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`linux/` + runtime.GOARCH + `: ([0-9.]+) MiB unpacked, ([0-9.]+) MiB compressed`).FindSubmatch(deploy)
	if m == nil {
		t.Fatalf("docs/deploy.md gives no size for linux/%s", runtime.GOARCH)
	}
	near("docs/deploy.md: the image unpacked", string(m[1]), mib(res.ImageBytes))
	near("docs/deploy.md: the image compressed", string(m[2]), mib(res.LayerBytes))

	bench, err := os.ReadFile("../../docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	all := regexp.MustCompile(`([0-9.]+) to ([0-9.]+) MiB per function binary and ([0-9.]+) MiB for .agentmem.`).FindAllSubmatch(bench, -1)
	if all == nil {
		t.Fatal("docs/benchmarks.md gives no current binary sizes for W6")
	}
	// The last figures given are the current ones.
	m = all[len(all)-1]
	near("docs/benchmarks.md: the agentmem binary", string(m[3]), mib(res.BinaryBytes))
	// A function binary links a subset of agentmem, only the parts its function uses
	// (scripts/check-binaries.sh holds each to its ceiling): smaller, by up to a fifth.
	for i, what := range []string{"smallest function binary", "largest function binary"} {
		f, err := strconv.ParseFloat(string(m[i+1]), 64)
		if measured := mib(res.BinaryBytes); err != nil || f > measured*(1+sizeTolerance) || f < measured*(0.8-sizeTolerance) {
			t.Errorf("docs/benchmarks.md: the %s: documented %s MiB, agentmem measured %.1f MiB: want 70%% to 110%% of it", what, m[i+1], measured)
		}
	}
}

// lambdaAPIs are a Runtime API and an Extensions API on one address, as Lambda serves them:
// the Extensions API's next call returns when the runtime's does (an invocation begins), and
// calls lists the paths asked, in order.
type lambdaAPIs struct {
	mu    sync.Mutex
	calls []string
}

func (l *lambdaAPIs) callsSoFar() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

func newLambdaAPIs(t *testing.T) (*runtimeAPI, *lambdaexttest.API, *lambdaAPIs, string) {
	api := &runtimeAPI{events: make(chan invocation, 4), answers: make(chan answer, 4)}
	ext := lambdaexttest.NewAPI(t)
	l := &lambdaAPIs{}
	mux := http.NewServeMux()
	ext.Handle(mux)
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", func(w http.ResponseWriter, r *http.Request) {
		select {
		case inv := <-api.events:
			// far enough that an extension waiting for the deadline rather than for the
			// handler would fail the test's waits (a minute)
			deadline := time.Now().Add(10 * time.Minute)
			ext.Invoke(inv.id, deadline)
			w.Header().Set("Lambda-Runtime-Aws-Request-Id", inv.id)
			w.Header().Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(deadline.UnixMilli(), 10))
			w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:eu-west-1:123456789012:function:agentmem-commit-turn")
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, inv.event) //nolint:errcheck
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		api.answers <- answer{id: r.PathValue("id"), kind: "response", body: body}
		w.WriteHeader(http.StatusAccepted)
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.calls = append(l.calls, r.URL.Path)
		l.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return api, ext, l, strings.TrimPrefix(srv.URL, "http://")
}

// Under Lambda, commit-turn answers before its messages are embedded (MESSAGE_EMBEDDING's
// default), and its internal extension keeps the environment from being frozen until they
// are: it registers before the runtime first asks for an invocation, and asks for its next
// event only once the vectors are stored.
func TestImageEmbedsAfterTheAnswerUnderLambda(t *testing.T) {
	res, _ := buildImage(t)
	root := extract(t, res)
	db := testdb.New(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	const model, dims = "fake-embed-8", 8
	held, release := make(chan struct{}, 4), make(chan struct{})
	emb := embeddingtest.New(t, model, dims)
	emb.Before = func(*http.Request, []string) { held <- struct{}{}; <-release }
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()

	api, ext, calls, addr := newLambdaAPIs(t)
	session := uuid.New()
	embedded := make(chan int, 4) // the session's messages with a vector, at each extension next
	ext.OnNext = func() {
		var n int
		if err := conn.QueryRow(ctx, `select count(embedding) from agentmem.messages where session_id = $1`, session).Scan(&n); err != nil {
			t.Error(err)
		}
		embedded <- n
	}
	startLambda(t, root, []string{"lambda", "commit-turn"}, imageEnv(db.URL, "AWS_LAMBDA_RUNTIME_API="+addr,
		"AWS_LAMBDA_FUNCTION_NAME=agentmem-commit-turn", "EMBEDDING_PROVIDER=openai", "EMBEDDING_BASE_URL="+emb.URL,
		"EMBEDDING_MODEL="+model, "EMBEDDING_DIMENSIONS="+strconv.Itoa(dims)))

	body := `{"session_id": "` + session.String() + `", "messages": [{"role": "user", "content": "I moved to Lisbon"}, ` +
		`{"role": "assistant", "content": "Welcome to Lisbon!"}]}`
	a := api.invoke(t, functionURLEvent(userToken(t), body))
	var out struct {
		StatusCode int `json:"statusCode"`
	}
	if err := json.Unmarshal(a.body, &out); err != nil || out.StatusCode != 201 {
		t.Fatalf("commit-turn through the Runtime API: %s %s", a.kind, a.body)
	}
	// The answer came while the embedder had not answered: its request is held.
	select {
	case <-held:
	case <-time.After(time.Minute):
		t.Fatal("the messages were not embedded after the answer")
	}
	select {
	case n := <-embedded: // the extension's first next, at the end of Init
		if n != 0 {
			t.Errorf("%d messages had vectors before the commit", n)
		}
	case <-time.After(time.Minute):
		t.Fatal("the extension never asked for an event")
	}
	select {
	case n := <-embedded:
		t.Fatalf("the extension was done with the invocation while its messages were being embedded (%d with vectors)", n)
	default:
	}
	close(release)
	select {
	case n := <-embedded:
		if n != 2 {
			t.Errorf("the extension was done with the invocation when %d of its 2 messages had vectors", n)
		}
	case <-time.After(time.Minute):
		t.Fatal("the extension did not ask for its next event after the messages were embedded")
	}
	if name := <-ext.Registered; name != lambdaext.Name {
		t.Errorf("the extension registered as %q", name)
	}
	order := calls.callsSoFar()
	register, next := slices.Index(order, "/2020-01-01/extension/register"), slices.Index(order, "/2018-06-01/runtime/invocation/next")
	if register < 0 || next < 0 || register > next {
		t.Errorf("calls %v: want the extension registered before the runtime's first next", order)
	}
}
