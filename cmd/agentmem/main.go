// Command agentmem is the operator's tool: it serves every function on one port for local
// development, prepares a local database, mints local tokens, runs the sweep, erases a user,
// fills the knowledge base from files, and re-embeds after a change of embedding model.
//
//	agentmem serve                 serve POST /v1/<name> for every function, GET /healthz and the
//	                               demo chat page at /demo/ (ADDR, else :$PORT, else
//	                               127.0.0.1:9000); SIGTERM drains and stops
//	agentmem lambda [NAME]         run one function under the Lambda Runtime API (NAME or
//	                               $AGENTMEM_FUNCTION): the container image's Lambda mode
//	agentmem schedule [flags]      install (or remove) the pg_cron job that sweeps expired rows
//	agentmem bootstrap             create the Supabase roles, auth helpers and auth.users a local database lacks
//	agentmem partition [--partitions N] [--lock-timeout D]
//	                               partition the user-owned tables by user (USER_PARTITIONS) after the migrations
//	agentmem token [flags]         print a local HS256 access token
//	agentmem sweep [flags]         delete expired rows now
//	agentmem forget --user UUID [--tenant T]
//	                               erase everything stored for a user (every tenant without --tenant)
//	agentmem ingest [--tenant T] [--source-prefix P] PATH
//	                               ingest a file or a folder's text and Markdown files into the knowledge base
//	agentmem embed-pending [--limit N] [--max-duration D]
//	                               embed rows stored without a vector of the configured model
//	agentmem backfill [--tenant T] [--user UUID] [--table memories|knowledge|all] [--batch N]
//	                  [--limit N] [--dry-run] [--no-index]
//	                               re-embed a scope with the configured model, with a progress bar; resumable
//	agentmem index                 make the configured model's HNSW indexes where missing
//	agentmem jobs list|get|retry|purge [flags]
//	                               the outbox's jobs, as the jobs function shows them
//	agentmem process-jobs [--limit N] [--max-duration D]
//	                               deliver due jobs to the enabled adapters now
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/config"
	"github.com/agentmem/agentmem/shared/httpapi"
	"github.com/agentmem/agentmem/shared/mcpserver"
	"github.com/agentmem/agentmem/shared/schema"
	"github.com/agentmem/agentmem/shared/service"
)

const usage = `usage: agentmem <command> [flags]

commands:
  serve       serve every function at POST /v1/<name>, GET /healthz and the demo chat page at
              /demo/ (ADDR, else :$PORT, else 127.0.0.1:9000; with DEMO_TOKENS=true on a loopback
              ADDR and the local default secret, POST /demo/token mints the page's sign-in
              tokens); SIGTERM or Ctrl-C lets requests in flight finish, then stops
  lambda      run one function under the Lambda Runtime API: lambda [NAME] (default
              $AGENTMEM_FUNCTION), as a Lambda container image does
  schedule    install the pg_cron job that sweeps expired rows in the database itself:
              [--cron '*/15 * * * *'] [--batch-size N] [--max-batches N] [--remove] [--show]
  bootstrap   create the Supabase roles, auth helpers and auth.users a local database lacks (DATABASE_URL)
  partition   partition every user-owned table by hash of its user, in place, after the migrations
              (scripts/migrate.sh runs it when USER_PARTITIONS > 1): [--partitions N] (default
              USER_PARTITIONS, else 1: nothing changes) [--lock-timeout 10s]; idempotent; refuses
              another number once partitioned
  token       print a local HS256 access token (SUPABASE_JWT_SECRET or the local default)
  sweep       delete expired rows now
  forget      erase everything stored for a user: --user UUID [--tenant T] (default: every tenant)
  ingest      ingest a file or a folder's text and Markdown files into the knowledge base:
              [--tenant T] [--source-prefix P] [--dry-run] PATH
  embed-pending
              embed the memories, knowledge chunks and messages stored without a vector of
              the configured model (after a provider outage or a model change):
              [--limit N] [--max-duration D]
  backfill    re-embed a scope with the configured embedder after a change of model (or to finish
              rows stored while the provider was down), with a progress bar and a summary;
              resumable: a run stopped by Ctrl-C, a crash or a timeout goes on where it stopped
              when run again, since rows already embedded by the configured model and dimension
              are never selected. Makes the model's HNSW indexes first (unless --no-index).
              [--tenant T] [--user UUID] [--table memories|knowledge|messages|all] [--batch N]
              [--limit N] [--dry-run] [--no-index]   (agentmem backfill -h for details)
  index       make the configured model's HNSW indexes on memories, knowledge chunks and
              messages where missing (CREATE INDEX CONCURRENTLY IF NOT EXISTS), printing the
              statements
  jobs        the outbox's jobs (ADAPTERS): list [--status S] [--adapter A] [--limit N] [--cursor C],
              get ID, retry ID (a dead job), purge --status done|dead [--older-than D]
  process-jobs
              deliver due jobs to the enabled adapters now: [--limit N] [--max-duration D]
              (agentmem serve delivers on its own, after each change and every JOBS_POLL_INTERVAL)
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(ctx)
	case "lambda":
		err = runLambda(os.Args[2:])
	case "schedule":
		err = schedule(ctx, os.Args[2:])
	case "bootstrap":
		err = bootstrap(ctx)
	case "partition":
		err = partition(ctx, os.Args[2:], os.Stdout)
	case "token":
		err = token(os.Args[2:])
	case "sweep":
		err = sweep(ctx, os.Args[2:])
	case "forget":
		err = forget(ctx, os.Args[2:])
	case "ingest":
		err = ingest(ctx, os.Args[2:])
	case "embed-pending":
		err = embedPending(ctx, os.Args[2:])
	case "backfill":
		err = backfill(ctx, os.Args[2:])
	case "index":
		err = ensureIndexes(ctx, os.Args[2:])
	case "jobs":
		err = jobs(ctx, os.Args[2:])
	case "process-jobs":
		err = processJobs(ctx, os.Args[2:])
	case "help", "-h", "--help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "agentmem: unknown command %q\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if errors.Is(err, flag.ErrHelp) {
		return // -h: the command printed its usage
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "agentmem %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func serve(ctx context.Context) error {
	if os.Getenv("DB_MAX_CONNS") == "" {
		// One process serves every function locally: a bigger pool than one Lambda's.
		os.Setenv("DB_MAX_CONNS", "16")
	}
	demoTokens := false
	if v := strings.TrimSpace(os.Getenv("DEMO_TOKENS")); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("DEMO_TOKENS must be true or false, not %q", v)
		}
		demoTokens = b
	}
	svc, err := service.StartParts(ctx, servingParts())
	if err != nil {
		return err
	}
	defer svc.Close()
	handler := withDemo(demoParams{
		API:       svc.Server.Mux(),
		Addr:      svc.Config.Addr,
		JWTSecret: svc.Config.JWTSecret,
		Tokens:    demoTokens,
		InLambda:  os.Getenv("AWS_LAMBDA_FUNCTION_NAME") != "",
		Log:       svc.Log,
	})
	srv := httpapi.NewHTTPServer(svc.Config.Addr, handler)
	ln, err := net.Listen("tcp", svc.Config.Addr)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	// The outbox's jobs are delivered by this process, after each change and on a poll, until
	// the requests in flight have finished.
	deliver, stopDelivery := context.WithCancel(context.WithoutCancel(ctx))
	delivered := make(chan struct{})
	go func() { defer close(delivered); svc.RunDeliveryLoop(deliver) }()
	defer func() { stopDelivery(); <-delivered }()
	// The address actually bound: ADDR with port 0 gets one from the system.
	fmt.Fprintf(os.Stderr, "agentmem: serving %d functions at http://%s/v1/<name> (health: /healthz), the demo page at http://%s/demo/\n",
		len(svc.Server.Functions()), ln.Addr(), ln.Addr())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Requests in flight finish (up to 25 s, below the 30 s most platforms wait after SIGTERM).
	shutdown, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	// The messages of the last turns are embedded before the pool closes, within the same
	// 25 s; what is left waits for embed-pending.
	svc.App.WaitEmbeddedContext(shutdown) //nolint:errcheck // what is left waits for embed-pending
	fmt.Fprintln(os.Stderr, "agentmem: stopped")
	return nil
}

// runLambda runs one function under the Lambda Runtime API (AWS_LAMBDA_RUNTIME_API), as
// functions/<name> does: the container image's entry point on Lambda.
func runLambda(args []string) error {
	fs := flag.NewFlagSet("lambda", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	name := os.Getenv("AGENTMEM_FUNCTION")
	switch fs.NArg() {
	case 0:
	case 1:
		name = fs.Arg(0)
	default:
		return fmt.Errorf("unexpected arguments %q", fs.Args()[1:])
	}
	if name == "" {
		return errors.New("name the function: agentmem lambda <name>, or set AGENTMEM_FUNCTION")
	}
	if !slices.Contains(httpapi.FunctionNames(), name) {
		return fmt.Errorf("unknown function %q; functions: %s", name, strings.Join(httpapi.FunctionNames(), ", "))
	}
	if os.Getenv("AWS_LAMBDA_RUNTIME_API") == "" {
		return errors.New("AWS_LAMBDA_RUNTIME_API is not set: this runs inside Lambda (or under a Runtime API emulator); use agentmem serve elsewhere")
	}
	entry, _ := service.EntryByName(name)
	service.RunLambda(servingParts(), entry)
	return nil
}

// servingParts are the parts of a process that serves every function: all of them, and the
// mcp function's MCP server.
func servingParts() service.Parts {
	p := service.AllParts()
	p.MCP = mcpserver.Handler
	return p
}

func bootstrap(ctx context.Context) error {
	cfg, err := config.Load(os.Getenv)
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	return schema.Bootstrap(ctx, conn)
}

func token(args []string) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	sub := fs.String("sub", "", "the user's UUID (default: a new random one, for user tokens)")
	role := fs.String("role", auth.RoleUser, "authenticated or service_role")
	tenant := fs.String("tenant", "", "app_metadata.tenant_id")
	ttl := fs.Duration("ttl", auth.DefaultMintTTL, "lifetime, a Go duration (make token TTL=24h)")
	anonymous := fs.Bool("anonymous", false, "an anonymous sign-in's token (is_anonymous: true)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	// Every function refuses any other role: minting one would only make a token that fails.
	if *role != auth.RoleUser && *role != auth.RoleService {
		return fmt.Errorf("unknown role %q: use %s (a user) or %s (a trusted server)", *role, auth.RoleUser, auth.RoleService)
	}
	if *ttl <= 0 {
		return fmt.Errorf("--ttl must be positive, got %s", *ttl)
	}
	cfg, err := config.Load(os.Getenv)
	if err != nil {
		return err
	}
	if cfg.JWTSecret == "" {
		return errors.New("no SUPABASE_JWT_SECRET: tokens of a JWKS-configured project come from Supabase Auth")
	}
	if *role == auth.RoleUser && *sub == "" {
		*sub = uuid.NewString()
	}
	tok, err := auth.MintHS256(cfg.JWTSecret, auth.MintClaims{Role: *role, Subject: *sub, TenantID: *tenant, TTL: *ttl,
		Anonymous: *anonymous, Issuer: cfg.JWTIssuer})
	if err != nil {
		return err
	}
	fmt.Println(tok)
	return nil
}

func sweep(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	dry := fs.Bool("dry-run", false, "count expired rows, delete nothing")
	batch := fs.Int("batch-size", app.DefaultSweepBatch, "rows per batch")
	budget := fs.Duration("max-duration", time.Minute, "time budget")
	if err := fs.Parse(args); err != nil {
		return err
	}
	svc, err := service.Start(ctx)
	if err != nil {
		return err
	}
	defer svc.Close()
	res, err := svc.App.Sweep(ctx, *dry, *batch, *budget)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// forget erases a user, as the forget-user function does for a service caller: in one tenant
// with --tenant, else in every tenant.
func forget(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("forget", flag.ContinueOnError)
	user := flags.String("user", "", "the user's UUID (required)")
	var tenant *string
	flags.Func("tenant", "erase only this tenant's rows of the user (\"\" is the tenant-less scope); default: every tenant", func(v string) error {
		tenant = &v
		return nil
	})
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", flags.Args())
	}
	if !auth.ValidUserID(*user) {
		flags.Usage()
		return errors.New("--user must be 1 to 255 printable characters")
	}
	svc, err := service.Start(ctx)
	if err != nil {
		return err
	}
	defer svc.Close()
	res, err := svc.App.EraseUser(ctx, *user, tenant)
	if err != nil {
		return problemText(err)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}
