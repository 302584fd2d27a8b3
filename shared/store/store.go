// Package store keeps agentmem's data in PostgreSQL. Every user request runs in one
// transaction under the role CallerRole with the caller's claims set, as PostgREST does for its
// roles, so row-level security decides what it may see; the queries repeat the owner filter so
// the indexes serve them.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/puddle/v2"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/telemetry"
)

// Config configures a Store.
type Config struct {
	// DatabaseURL is the PostgreSQL URL; it may point at a transaction-mode pooler.
	DatabaseURL string
	// MaxConns caps the pool; default memory.DefaultMaxConns.
	MaxConns int32
	// IdempotencyWindow is how long responses are kept for replay; default 24h.
	IdempotencyWindow time.Duration
	// Ranking tunes recall and knowledge search; zero fields take DefaultRanking's.
	Ranking Ranking
	// MergeSimilarity is the cosine similarity from which a fact stored by CommitTurn merges
	// into a near-duplicate memory of its scope instead of taking a row of its own; default
	// (0) memory.DefaultMergeSimilarity. Above 1, only facts of the same normalised text merge.
	MergeSimilarity float64
	// Adapters are the enabled adapters (ADAPTERS): every change an adapter must learn of
	// writes one job per name, in the change's transaction. Default none: no job is written.
	Adapters []string
	// ExtractFacts writes an adapter.Extract job with every committed turn that stored new
	// messages and did not opt out (CommitParams.NoExtract); default false.
	ExtractFacts bool
	// Summaries writes an adapter.Summarize job with every committed turn that stored new
	// messages, and keeps the sessions' rolling summaries; default false.
	Summaries bool
	// ReadURLs are the PostgreSQL URLs of read replicas of DatabaseURL (streaming replicas,
	// which pg_last_wal_replay_lsn describes), each with a pool of MaxConns; default none: every
	// read goes to the primary. See MayReadReplica for which reads may go to one.
	ReadURLs []string
	// ReplicaMaxLag is how far behind the primary a replica may be and still serve reads;
	// default memory.DefaultReplicaMaxLag (5s).
	ReplicaMaxLag time.Duration
	// ReplicaCheckInterval is how often the replicas' replay positions are read; default
	// memory.DefaultReplicaCheckInterval (1s).
	ReplicaCheckInterval time.Duration
	// Log receives what happens to the replicas (left out, back in use); default none.
	Log *slog.Logger
	// ConnConfig, when set, adjusts the configuration of each pool's connections (the
	// primary's, the replicas') before the pool opens (a tracer, a notice handler, server
	// settings): tests watch every statement and the plans the server reports with it. Default
	// none.
	ConnConfig func(*pgx.ConnConfig)
	// ListsAtOnce chooses when a recall of two lists or more asks them at once (see
	// ListsAtOnce); default ListsAtOnceAuto.
	ListsAtOnce ListsAtOnce
}

// Store is the database side of every function. It is safe for concurrent use.
type Store struct {
	pool    *pgxpool.Pool
	idemTTL time.Duration
	ranking Ranking
	// mergeSimilarity is Config.MergeSimilarity or its default.
	mergeSimilarity float64
	// adapters is Config.Adapters.
	adapters []string
	// extract and summarize are Config.ExtractFacts and Config.Summaries.
	extract, summarize bool
	// preparesStatements is whether statements are prepared once per connection
	// (pgx.QueryExecModeCacheStatement), so that a generic plan is planned once (see
	// batchInScopeGeneric).
	preparesStatements bool
	// replicas route the reads MayReadReplica marks; nil without Config.ReadURLs.
	replicas *replicaSet
	// listsAtOnce is Config.ListsAtOnce; slowScopes what it learned, for ListsAtOnceAuto, of
	// recalls slower than listsAtOnceAfter (ListsAtOnceAfter; tests change it).
	listsAtOnce      ListsAtOnce
	slowScopes       scopeMemo
	listsAtOnceAfter time.Duration
}

// Open connects a pool. The URL's default_query_exec_mode, when it has one, chooses how
// statements are sent; else QueryExecMode(url) does.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	pc, err := poolConfig(cfg.DatabaseURL, cfg.MaxConns)
	if err != nil {
		return nil, err
	}
	if cfg.ConnConfig != nil {
		cfg.ConnConfig(pc.ConnConfig)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("create pool: %w", err)
	}
	s := &Store{pool: pool, idemTTL: cfg.IdempotencyWindow, ranking: cfg.Ranking.orDefaults(),
		mergeSimilarity: cfg.MergeSimilarity, adapters: slices.Clone(cfg.Adapters),
		extract: cfg.ExtractFacts, summarize: cfg.Summaries,
		preparesStatements: pc.ConnConfig.DefaultQueryExecMode == pgx.QueryExecModeCacheStatement,
		listsAtOnce:        cfg.ListsAtOnce, listsAtOnceAfter: ListsAtOnceAfter}
	if s.idemTTL <= 0 {
		s.idemTTL = 24 * time.Hour
	}
	if !(s.mergeSimilarity > 0) {
		s.mergeSimilarity = memory.DefaultMergeSimilarity
	}
	if len(cfg.ReadURLs) > 0 {
		if s.replicas, err = openReplicas(ctx, cfg, pool); err != nil {
			pool.Close()
			return nil, err
		}
	}
	return s, nil
}

// poolConfig is the pool configuration of the primary's or a replica's URL, with at most
// maxConns connections (memory.DefaultMaxConns when 0).
func poolConfig(url string, maxConns int32) (*pgxpool.Config, error) {
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if !strings.Contains(url, "default_query_exec_mode") {
		// pgx takes the parameter out of the runtime parameters as it parses the URL, and its
		// own default is the statement cache: whether the URL named a mode is in the URL alone.
		pc.ConnConfig.DefaultQueryExecMode = QueryExecMode(pc.ConnConfig.Port)
	}
	if _, set := pc.ConnConfig.Config.RuntimeParams["application_name"]; !set {
		pc.ConnConfig.Config.RuntimeParams["application_name"] = "agentmem"
	}
	pc.MaxConns = memory.DefaultMaxConns
	if maxConns > 0 {
		pc.MaxConns = maxConns
	}
	pc.MinConns = 0
	pc.MaxConnIdleTime = 5 * time.Minute
	return pc, nil
}

// StatementCachePorts are the ports where the store prepares statements by default: 5432,
// PostgreSQL's own (a direct connection, or a session-mode pooler such as Supabase's Supavisor
// on 5432, which keeps a client's server connection for the session), and 54322, the local
// Supabase stack's database.
var StatementCachePorts = []uint16{5432, 54322}

// QueryExecMode is how the store sends statements to a server on port when the URL does not
// say (default_query_exec_mode). On a port of StatementCachePorts: prepared once per
// connection as named statements, which PostgreSQL then executes without parsing again, and
// with a cached plan once it finds one as good as a fresh one. Anywhere else, where a
// transaction-mode pooler may keep no named statement from one transaction to the next (6543,
// Supabase's; 6432, PgBouncer's default; any port of one's own): described once and cached per
// connection, each sent unnamed, so the contract's "no reliance on named prepared statements"
// holds for any pooler. A direct connection on another port gains the cache with
// default_query_exec_mode=cache_statement in its URL.
func QueryExecMode(port uint16) pgx.QueryExecMode {
	if slices.Contains(StatementCachePorts, port) {
		return pgx.QueryExecModeCacheStatement
	}
	return pgx.QueryExecModeCacheDescribe
}

// Close closes the pools.
func (s *Store) Close() {
	if s.replicas != nil {
		s.replicas.close()
	}
	s.pool.Close()
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return interpret(s.pool.Ping(ctx)) }

// CallerRole is the role a user's request runs as. It is agentmem's own, not `authenticated`:
// no Supabase client can take it, so only the functions write (see the migration
// 20261123000000_take_writes_from_client_roles). The login the store connects as must be a
// member of it; the migrations grant it to the login that applies them.
const CallerRole = "agentmem_caller"

// claimsJSON is what auth.jwt() returns inside a user transaction. The shared scope's claims
// name memory.SharedUserID, under which row-level security (caller_owner) lets the
// transaction write the tenant's shared memories; any other scope must name its user, so that a
// scope left without one never writes there.
func claimsJSON(sc memory.Scope) (string, error) {
	if sc.Shared != (sc.UserID == memory.SharedUserID) {
		return "", fmt.Errorf("scope: shared %v with user id of %d bytes", sc.Shared, len(sc.UserID))
	}
	claims := map[string]any{"sub": sc.UserID, "role": "authenticated", "aud": "authenticated"}
	if sc.TenantID != "" {
		claims["app_metadata"] = map[string]any{"tenant_id": sc.TenantID}
	}
	b, err := json.Marshal(claims)
	return string(b), err
}

// inScope runs fn in one transaction as the scope's user: role CallerRole and the user's claims
// set for the transaction only, so row-level security applies.
func (s *Store) inScope(ctx context.Context, sc memory.Scope, fn func(tx pgx.Tx) error) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := setScope(ctx, tx, sc); err != nil {
			return err
		}
		return fn(tx)
	})
	if err == nil {
		noteWrite(ctx, sc.UserID)
	}
	return err
}

// setScope makes the rest of tx run as the scope's user (see setClaimsSQL).
func setScope(ctx context.Context, tx pgx.Tx, sc memory.Scope) error {
	claims, err := claimsJSON(sc)
	if err != nil {
		return err
	}
	q, args := scopeStatement(ctx, setClaimsSQL, claims, sc.UserID, statementTimeout(ctx))
	if _, err := tx.Exec(ctx, q, args...); err != nil {
		return fmt.Errorf("set claims: %w", err)
	}
	return nil
}

// setClaimsSQL starts every transaction of a user: role CallerRole, the user's claims ($1),
// and the user's ($2) advisory lock in shared mode, which ForgetUser takes in exclusive mode.
// A forget thus waits for the user's transactions in flight and holds back those that start
// meanwhile (reads included) until it commits, so it erases everything committed before it and
// nothing a later write stores; and no transaction of the user holds row locks that a forget
// could wait on in another order. Shared locks do not conflict with one another: the user's
// requests never wait for each other here. The lock's key is the user id hashed with seed 7216,
// in lockUserSQL too.
//
// $3 is the statement timeout (see statementTimeout): the server itself ends a statement that
// would outlive the request, so a request that answered 503 never commits afterwards.
const setClaimsSQL = `select set_config('role', '` + CallerRole + `', true),
	set_config('request.jwt.claims', $1::text, true),
	set_config('statement_timeout', $3::text, true),
	pg_advisory_xact_lock_shared(hashtextextended($2::text, 7216))`

// batchInScopeGeneric is batchInScope that, when want is set and statements are prepared once
// per connection, runs the statements queue adds on their generic plans, planned once per
// connection, instead of plans for each call's values; generic tells queue whether it does.
// PostgreSQL keeps planning a prepared statement for its values when it estimates the generic
// plan dearer than the plans for the values of its first calls: get-context's window, whose
// "limit $5" is estimated less selective without a value although the plan is the same (the
// session's primary key, backwards), was planned again on every call on a large table, and
// planning it cost more than running it. Only for statements that have one right plan whatever
// the values; queueResetPlans ends the switch. The setting (setClaimsGenericSQL) holds for the
// transaction only, and PostgreSQL reads it as it binds each statement, so in a batch it holds
// from the statement after the claims on. Where statements go unnamed (through a transaction
// pooler), each is planned at every call anyway, and it is batchInScope.
func (s *Store) batchInScopeGeneric(ctx context.Context, sc memory.Scope, want bool, queue func(b *pgx.Batch, generic bool)) error {
	if !want || !s.preparesStatements {
		return s.batchInScope(ctx, sc, func(b *pgx.Batch) { queue(b, false) })
	}
	return s.batchAs(ctx, sc, setClaimsGenericSQL, func(b *pgx.Batch) { queue(b, true) })
}

// setClaimsGenericSQL is setClaimsSQL that also switches the transaction to generic plans (see
// batchInScopeGeneric).
const setClaimsGenericSQL = setClaimsSQL + `,
	set_config('plan_cache_mode', 'force_generic_plan', true)`

// queueResetPlans gives the statements queued after it in b the plans the connection's settings
// choose again, after batchInScopeGeneric. RESET sets the session's value to the one the
// connection began with (the server's, database's or login's setting, or the URL's), which is
// what held before the switch: the store never sets plan_cache_mode for a session. If the
// transaction fails, the value before it comes back.
func queueResetPlans(b *pgx.Batch) {
	b.Queue(`reset plan_cache_mode`)
}

// statementTimeout is the statement_timeout of a request's transaction: the time left before
// ctx's deadline, less timeoutMargin; "0" (none) without a deadline. A batch is sent whole,
// Sync included, so without it a statement blocked on a lock would run on, and its implicit
// transaction commit, after the client had given up and answered 503.
func statementTimeout(ctx context.Context) string {
	d, ok := ctx.Deadline()
	if !ok {
		return "0"
	}
	left := time.Until(d)
	left -= timeoutMargin(left)
	if left < time.Millisecond {
		left = time.Millisecond
	}
	return fmt.Sprintf("%dms", left.Milliseconds())
}

// timeoutMargin is how much sooner than the client a statement's timeout ends it, out of left:
// a tenth, at least 50 ms and at most a second. The server counts each statement's timeout
// from the statement's own start, so the margin must cover the time the batch takes to reach
// its blocked statement (the first statements' network and queueing), as well as the answer's
// way back; on a loaded machine 50 ms alone did not: a blocked commit refused with 503 at a
// 3.6 s deadline ran on, and committed, once its lock was released.
func timeoutMargin(left time.Duration) time.Duration {
	return min(max(left/10, 50*time.Millisecond), time.Second)
}

// lockUserSQL takes the user's ($1) advisory lock in exclusive mode (see setClaimsSQL).
const lockUserSQL = `select pg_advisory_xact_lock(hashtextextended($1::text, 7216))`

// batchInScope runs the statements queue adds as the scope's user in one round trip: a batch
// is one pipeline with one Sync, so PostgreSQL runs it as one implicit transaction (all or
// nothing) and the role and claims set first hold for every statement after them, and only for
// them. For work that needs no decision between statements.
func (s *Store) batchInScope(ctx context.Context, sc memory.Scope, queue func(b *pgx.Batch)) error {
	return s.batchAs(ctx, sc, setClaimsSQL, queue)
}

// batchAs is batchInScope with claimsSQL (setClaimsSQL or a statement that does what it does
// first) as the first statement. Within MayReadReplica it may run on a replica, with the same
// role, claims and lock as on the primary, and run again on the primary if the replica fails
// it: queue's callbacks then run twice, and must set what they read rather than add to it.
func (s *Store) batchAs(ctx context.Context, sc memory.Scope, claimsSQL string, queue func(b *pgx.Batch)) error {
	claims, err := claimsJSON(sc)
	if err != nil {
		return err
	}
	build := func() *pgx.Batch {
		b := &pgx.Batch{}
		q, args := scopeStatement(ctx, claimsSQL, claims, sc.UserID, statementTimeout(ctx))
		b.Queue(q, args...)
		queue(b)
		return b
	}
	if s.replicas != nil && mayReadReplica(ctx) {
		return s.replicas.read(ctx, s.pool, sc.UserID, func(pool *pgxpool.Pool, onReplica bool) error {
			op := "batch"
			if onReplica {
				op = "batch.replica"
			}
			return sendBatchOn(ctx, pool, op, build())
		})
	}
	err = s.sendBatch(ctx, build())
	if err == nil {
		noteWrite(ctx, sc.UserID)
	}
	return err
}

// batchAsServiceRole runs the statements queue adds as service_role in one round trip, one
// implicit transaction, as batchInScope does for a user. It is for the maintenance jobs (sweep,
// embed-pending), which act on every user's rows: service_role bypasses row-level security (on
// Supabase and in the local bootstrap) whatever login the service connects as, while the login
// itself would see no row unless it owned the tables.
func (s *Store) batchAsServiceRole(ctx context.Context, queue func(b *pgx.Batch)) error {
	b := &pgx.Batch{}
	b.Queue(setServiceRoleSQL, statementTimeout(ctx))
	queue(b)
	err := s.sendBatch(ctx, b)
	if err == nil {
		noteWrite(ctx, "")
	}
	return err
}

// setServiceRoleSQL makes the rest of a transaction run as service_role, with its claims, as
// PostgREST does for a service_role token. $1 is the statement timeout (see statementTimeout):
// a statement cut short by the caller's deadline ends on the server too, so that its
// transaction never commits after the caller gave up on it.
const setServiceRoleSQL = `select set_config('role', 'service_role', true),
	set_config('request.jwt.claims', '{"role":"service_role"}', true),
	set_config('statement_timeout', $1::text, true)`

// sendBatch sends b to the primary, one implicit transaction, and interprets its error.
func (s *Store) sendBatch(ctx context.Context, b *pgx.Batch) error {
	return sendBatchOn(ctx, s.pool, "batch", b)
}

// sendBatchOn sends b on pool (op names the span), one implicit transaction, and interprets its
// error.
func sendBatchOn(ctx context.Context, pool *pgxpool.Pool, op string, b *pgx.Batch) error {
	ctx, span := telemetry.StartStore(ctx, op)
	err := interpret(pool.SendBatch(ctx, b).Close())
	span.End(err)
	return err
}

// inTx runs fn in one transaction on the primary.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	ctx, span := telemetry.StartStore(ctx, "tx")
	err := interpret(pgx.BeginFunc(ctx, s.pool, fn))
	span.End(err)
	if err == nil {
		noteWrite(ctx, "")
	}
	return err
}

// ErrConnectionLost is in the chain of an ErrUnavailable error whose connection to the database
// or pooler failed or broke: a restart or failover, which takes longer than a busy moment.
var ErrConnectionLost = errors.New("connection to the database lost")

// interpret translates the database's errors into the store's kinds (see ErrNotFound), once for
// every statement: no row, or a write row-level security refused, becomes ErrNotFound, and a
// unique violation ErrConflict (both without a detail: the code that expects them says what was
// not found or taken, see notFoundAs, and any other is the server's); text the database
// cannot store becomes ErrInvalid; a database or pooler that is unreachable, restarting,
// overloaded or that lost the connection mid-request, and a request out of time, become
// ErrUnavailable (ErrConnectionLost in the chain for a lost connection); the rest stays an
// error of no kind, the server's. An error the store already gave a kind passes unchanged. How
// long a client should wait is the transport's policy, not the store's.
//
// A connection lost mid-request leaves the outcome unknown only for a commit already sent:
// every request runs in one transaction (or one implicit one, a batch), so it is then either
// whole or absent, and a retry with the same Idempotency-Key answers from the record.
func interpret(err error) error {
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) {
		return err
	}
	if ranOutOfTime(err) {
		return &Error{Kind: ErrUnavailable, Detail: "the request ran out of time; retry", Err: err}
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return &Error{Kind: ErrNotFound, Err: err}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "42501": // insufficient_privilege: row-level security refused a write
			return &Error{Kind: ErrNotFound, Err: err}
		case pgErr.Code == "23505": // unique_violation: another row holds the key
			return &Error{Kind: ErrConflict, Err: err}
		case clientCaused[pgErr.Code]:
			return &Error{Kind: ErrInvalid, Detail: "the request holds text the database cannot store", Err: err}
		case serverUnavailable(pgErr):
			return &Error{Kind: ErrUnavailable, Detail: "the database is busy or unavailable; retry", Err: err}
		}
		return fmt.Errorf("database: %w", err)
	}
	if connectionLost(err) {
		return &Error{Kind: ErrUnavailable, Detail: "the database is unavailable; retry",
			Err: fmt.Errorf("%w: %w", ErrConnectionLost, err)}
	}
	return err
}

// clientCaused are the SQLSTATEs of text the database refuses: untranslatable character,
// invalid byte sequence, program limit (e.g. text too long for a search index), JSON nested
// deeper than the server's stack, JSON the jsonb type refuses (a lone UTF-16 surrogate escape, a
// number beyond numeric's range).
var clientCaused = map[string]bool{"22P05": true, "22021": true, "54000": true, "54001": true, "22P02": true, "22003": true}

// retryable are the SQLSTATEs outside the classes serverUnavailable takes whole after which
// nothing was written and a retry may succeed: serialization failure, deadlock, lock timeout.
var retryable = map[string]bool{"40001": true, "40P01": true, "55P03": true}

// poolerGone are what poolers say when their server went away or cannot be reached, whatever
// SQLSTATE they give it (PgBouncer 08P01, Supavisor XX000).
var poolerGone = []string{
	"server conn crashed",                       // PgBouncer: the server connection broke mid-transaction
	"server login has been failing",             // PgBouncer: the server refuses or is restarting
	"pgbouncer cannot connect to server",        // PgBouncer
	"server closed the connection unexpectedly", // libpq-based proxies
	"connection to database closed",             // Supavisor (EDBHANDLEREXITED)
}

// serverUnavailable reports whether a server's or pooler's error means the database is
// unavailable rather than that the request is wrong: the classes 08 (connection exception, which
// PgBouncer uses for its own errors), 53 (insufficient resources: too many connections, out of
// memory, disk full) and 57 (operator intervention: admin or crash shutdown, starting up; its
// query_canceled is a timeout, taken before); the retryable codes; any FATAL or PANIC, which ends
// the session; and what poolers say when their server went away.
func serverUnavailable(e *pgconn.PgError) bool {
	switch {
	case strings.HasPrefix(e.Code, "08"), strings.HasPrefix(e.Code, "53"), strings.HasPrefix(e.Code, "57"), retryable[e.Code]:
		return true
	case e.Severity == "FATAL" || e.Severity == "PANIC" || e.SeverityUnlocalized == "FATAL" || e.SeverityUnlocalized == "PANIC":
		return true
	}
	msg := strings.ToLower(e.Message)
	for _, m := range poolerGone {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// connectionLost reports whether err says the connection to the database or pooler failed or
// broke: a failed connect, a network error (reset, refused, broken pipe), the server's socket
// closed mid-message (io.EOF, io.ErrUnexpectedEOF), a connection the driver already closed, an
// error the driver marks safe to retry, or a pool that is closed or cannot hand out a
// connection.
func connectionLost(err error) bool {
	var netErr net.Error
	var connectErr *pgconn.ConnectError
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr), pgconn.SafeToRetry(err), pgconn.Timeout(err):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, pgconn.ErrConnClosed), errors.Is(err, puddle.ErrClosedPool),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE):
		return true
	}
	// pgxpool gives up with an untyped error when every connection it tried failed its ping.
	return strings.Contains(err.Error(), "pgxpool: too many failed attempts acquiring connection")
}

// ranOutOfTime reports whether err ended a request for want of time: its context's deadline or
// cancellation, or the statement timeout that deadline set on the server (query_canceled).
func ranOutOfTime(err error) bool {
	var pgErr *pgconn.PgError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.As(err, &pgErr) && pgErr.Code == "57014"
}
