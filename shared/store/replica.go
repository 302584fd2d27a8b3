package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmem/agentmem/shared/memory"
)

// Read replicas (Config.ReadURLs). The reads a use case marks with MayReadReplica go to a
// replica that is healthy, lags the primary by at most ReplicaMaxLag, and has replayed the
// position the read needs: the one the request carries (ReadAfter), and this process's last
// write for the same user within recentWindow. Any other read, and every write, goes to the
// primary; so does a marked read no replica can answer in time, and one a replica fails.
//
// What a replica has replayed is known from two sources: a loop that asks every replica and the
// primary each ReplicaCheckInterval, and a direct question to a replica when a read needs more
// than it was last seen to have. A replica's replay position only grows, so any value once
// read is a sound lower bound, however old: a read is never sent to a replica that has not
// replayed what it needs.
//
// Lag is measured in the primary's own terms: each check samples the primary's insert position
// first, then the replicas' replay positions; a replica that has replayed a sample taken at time
// t holds every commit acknowledged before t. Its lag is the age of the newest sample it has
// replayed. A replica's own view (now() - pg_last_xact_replay_timestamp()) would say nothing of
// WAL it never received, and grows on an idle primary.

// replicaCheckTimeout bounds one question to a server: a replica that does not answer within
// it is left out until it does.
const replicaCheckTimeout = 2 * time.Second

// walPage and walPageHeader are PostgreSQL's WAL page size and its longest page header. When a
// record ends exactly at a page's end, the insert position after it points past the next
// page's header while the replay position after it is the page boundary; the header holds no
// record, so a replica at the boundary has everything before the position (covers).
const (
	walPage       = 8192
	walPageHeader = 40
)

// covers reports whether a server that has replayed up to replayed holds everything committed
// before position p.
func covers(replayed, p Position) bool {
	return replayed >= p || (replayed%walPage == 0 && p-replayed <= walPageHeader)
}

// ReadStats counts the reads that MayReadReplica let go to a replica, since Open.
type ReadStats struct {
	// Replica were answered by a replica.
	Replica int64
	// Primary were answered by the primary: no replica was usable or had replayed what the
	// read needed, or one failed (Retried).
	Primary int64
	// Retried failed on a replica and were answered by the primary; counted in Primary too.
	Retried int64
	// Checks are the direct questions to a replica about its replay position.
	Checks int64
}

// replica is one read replica's pool and what the store knows of it.
type replica struct {
	addr string
	pool *pgxpool.Pool

	mu sync.Mutex
	// reachable: the last check answered, from a server in recovery.
	reachable bool
	// replayed is the greatest replay position read, at replayedAt.
	replayed   Position
	replayedAt time.Time
	// checkedAt is the last check of the loop; freshAsOf the time before which every commit
	// acknowledged by the primary is replayed (see the package's comment).
	checkedAt, freshAsOf time.Time
	// failedAt is the last read or check that failed; the replica is left out until a later
	// check succeeds.
	failedAt time.Time
	// asking is closed when the latest direct question in flight, asked at askedAt, ends;
	// nil when none is.
	asking  chan struct{}
	askedAt time.Time
	// told is what the log last said of r: "" (nothing yet), "in use" or "left out".
	told string
}

// tell returns what the log should say of r now that it is (inUse) or is not in use, "" when
// it said so already.
func (r *replica) tell(inUse bool) string {
	now := "left out"
	if inUse {
		now = "in use"
	}
	if r.told == now {
		return ""
	}
	r.told = now
	return now
}

// usable reports whether r may serve reads at now: it answered the loop's last check, which is
// recent, without a failure since, and lags by at most maxLag.
func (r *replica) usable(now time.Time, maxLag, stale time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reachable && !r.failedAt.After(r.checkedAt) && now.Sub(r.checkedAt) <= stale &&
		now.Sub(r.freshAsOf) <= maxLag
}

// replayPosition is the greatest replay position read of r.
func (r *replica) replayPosition() (Position, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.replayed, r.replayedAt
}

// sawReplay raises r's replay position to p, read at at.
func (r *replica) sawReplay(p Position, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p > r.replayed {
		r.replayed = p
	}
	if at.After(r.replayedAt) {
		r.replayedAt = at
	}
}

// failed leaves r out until the loop's next successful check, and reports whether the log
// should say so (it has not yet).
func (r *replica) failed(at time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failedAt = at
	return r.tell(false) != ""
}

// sample is the primary's insert position read at (or after) at.
type sample struct {
	at  time.Time
	pos Position
}

// replicaSet routes the marked reads among the replicas (see the comment at the top).
type replicaSet struct {
	list     []*replica
	next     atomic.Uint32
	maxLag   time.Duration
	interval time.Duration
	log      *slog.Logger
	recent   recentWrites

	mu      sync.Mutex
	samples []sample

	replicaReads, primaryReads, retried, checks atomic.Int64

	kick chan struct{}
	stop context.CancelFunc
	done chan struct{}
}

// stale is the age past which the loop's view of a replica is too old to route reads that
// need no position: the process may have been frozen (a Lambda between invocations).
func (rs *replicaSet) stale() time.Duration { return 3 * rs.interval }

// openReplicas connects a pool per read URL and starts the loop that checks them; the pools
// connect lazily, so a replica that is down does not stop the start.
func openReplicas(ctx context.Context, cfg Config, primary *pgxpool.Pool) (*replicaSet, error) {
	rs := &replicaSet{maxLag: cfg.ReplicaMaxLag, interval: cfg.ReplicaCheckInterval, log: cfg.Log,
		kick: make(chan struct{}, 1), done: make(chan struct{})}
	if rs.maxLag <= 0 {
		rs.maxLag = memory.DefaultReplicaMaxLag
	}
	if rs.interval <= 0 {
		rs.interval = memory.DefaultReplicaCheckInterval
	}
	if rs.log == nil {
		rs.log = slog.New(slog.DiscardHandler)
	}
	// A write older than this is replayed by every usable replica: the loop's view is at most
	// stale() old, and its replicas lag by at most maxLag behind a sample taken up to one
	// interval before.
	rs.recent.window = rs.maxLag + rs.stale() + rs.interval
	for _, u := range cfg.ReadURLs {
		pc, err := poolConfig(u, cfg.MaxConns)
		if err != nil {
			rs.close()
			return nil, fmt.Errorf("read url: %w", err)
		}
		if cfg.ConnConfig != nil {
			cfg.ConnConfig(pc.ConnConfig)
		}
		pool, err := pgxpool.NewWithConfig(ctx, pc)
		if err != nil {
			rs.close()
			return nil, fmt.Errorf("create read pool: %w", err)
		}
		rs.list = append(rs.list, &replica{addr: fmt.Sprintf("%s:%d", pc.ConnConfig.Host, pc.ConnConfig.Port), pool: pool})
	}
	loopCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	rs.stop = stop
	go rs.loop(loopCtx, primary)
	return rs, nil
}

// close stops the loop and closes the replicas' pools.
func (rs *replicaSet) close() {
	if rs.stop != nil {
		rs.stop()
		<-rs.done
	}
	for _, r := range rs.list {
		r.pool.Close()
	}
}

// loop checks the replicas at once, then every interval and whenever kicked, until ctx ends.
func (rs *replicaSet) loop(ctx context.Context, primary *pgxpool.Pool) {
	defer close(rs.done)
	t := time.NewTicker(rs.interval)
	defer t.Stop()
	for {
		rs.check(ctx, primary)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-rs.kick:
		}
	}
}

// wake asks the loop for a check soon, without waiting for it.
func (rs *replicaSet) wake() {
	select {
	case rs.kick <- struct{}{}:
	default:
	}
}

// check samples the primary's insert position, then asks every replica for its replay position.
func (rs *replicaSet) check(ctx context.Context, primary *pgxpool.Pool) {
	before := time.Now()
	pctx, cancel := context.WithTimeout(ctx, replicaCheckTimeout)
	var lsn string
	err := primary.QueryRow(pctx, `select pg_current_wal_insert_lsn()::text`).Scan(&lsn)
	cancel()
	if err == nil {
		if p, err := parseLSN(lsn); err == nil {
			rs.addSample(sample{at: before, pos: p})
		}
	}
	var wg sync.WaitGroup
	for _, r := range rs.list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs.checkReplica(ctx, r)
		}()
	}
	wg.Wait()
}

// addSample keeps s and the samples a lag up to maxLag can still be measured against.
func (rs *replicaSet) addSample(s sample) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	keep := s.at.Add(-(rs.maxLag + rs.stale() + rs.interval))
	i := 0
	for i < len(rs.samples)-1 && rs.samples[i].at.Before(keep) {
		i++
	}
	rs.samples = append(rs.samples[i:], s)
}

// freshAsOf is the time of the newest sample a replica that has replayed up to replayed holds
// (zero when it holds none).
func (rs *replicaSet) freshAsOf(replayed Position) time.Time {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for i := len(rs.samples) - 1; i >= 0; i-- {
		if covers(replayed, rs.samples[i].pos) {
			return rs.samples[i].at
		}
	}
	return time.Time{}
}

// checkReplica asks r whether it is a replica and how far it has replayed.
func (rs *replicaSet) checkReplica(ctx context.Context, r *replica) {
	cctx, cancel := context.WithTimeout(ctx, replicaCheckTimeout)
	defer cancel()
	var inRecovery bool
	var lsn *string
	asked := time.Now()
	err := r.pool.QueryRow(cctx, `select pg_is_in_recovery(), pg_last_wal_replay_lsn()::text`).Scan(&inRecovery, &lsn)
	now := time.Now()
	var replayed Position
	if err == nil && lsn != nil {
		replayed, err = parseLSN(*lsn)
	}
	if ctx.Err() != nil {
		return // closing
	}
	if err == nil && (!inRecovery || lsn == nil) {
		err = errors.New("the server is not a replica (not in recovery)")
	}
	r.mu.Lock()
	if err != nil {
		r.reachable = false
		r.failedAt = now
		told := r.tell(false)
		r.mu.Unlock()
		if told != "" {
			rs.log.WarnContext(ctx, "read replica left out", "replica", r.addr, "error", err)
		}
		return
	}
	if replayed > r.replayed {
		r.replayed = replayed
	}
	if asked.After(r.replayedAt) {
		r.replayedAt = asked
	}
	r.reachable = true
	r.checkedAt = now
	if f := rs.freshAsOf(r.replayed); f.After(r.freshAsOf) {
		r.freshAsOf = f
	}
	fresh := now.Sub(r.freshAsOf) <= rs.maxLag
	told := r.tell(fresh)
	r.mu.Unlock()
	switch told {
	case "in use":
		rs.log.InfoContext(ctx, "read replica in use", "replica", r.addr)
	case "left out":
		rs.log.WarnContext(ctx, "read replica lags; left out", "replica", r.addr, "max_lag_ms", rs.maxLag.Milliseconds())
	}
}

// pick chooses a usable replica that has replayed need, or nil for the primary. When none was
// seen to have replayed enough, it asks one directly.
func (rs *replicaSet) pick(ctx context.Context, need Position) *replica {
	now := time.Now()

	n := len(rs.list)
	start := int(rs.next.Add(1))
	var behind *replica
	for i := range n {
		r := rs.list[(start+i)%n]
		if !r.usable(now, rs.maxLag, rs.stale()) {
			continue
		}
		if replayed, _ := r.replayPosition(); covers(replayed, need) {
			return r
		}
		if behind == nil {
			behind = r
		}
	}
	if behind == nil {
		// None usable: perhaps only because the loop has not run for a while (a frozen
		// process); it runs now, for the next reads.
		rs.wake()
		return nil
	}
	if covers(rs.askReplay(ctx, behind, now), need) {
		return behind
	}
	return nil
}

// askReplay asks r directly for its replay position and returns the greatest position known.
// A position read after since (when the read began, after the write it needs was answered) is
// as good as a new one: a question asked by another reader after since is waited for rather
// than asked again, and a position read after since is taken as it is.
func (rs *replicaSet) askReplay(ctx context.Context, r *replica, since time.Time) Position {
	r.mu.Lock()
	if r.replayedAt.After(since) {
		p := r.replayed
		r.mu.Unlock()
		return p
	}
	if wait := r.asking; wait != nil && r.askedAt.After(since) {
		r.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
		}
		p, _ := r.replayPosition()
		return p
	}
	done := make(chan struct{})
	r.asking, r.askedAt = done, time.Now()
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		if r.asking == done {
			r.asking = nil
		}
		r.mu.Unlock()
		close(done)
	}()
	rs.checks.Add(1)
	cctx, cancel := context.WithTimeout(ctx, replicaCheckTimeout)
	defer cancel()
	var lsn *string
	asked := time.Now()
	err := r.pool.QueryRow(cctx, `select pg_last_wal_replay_lsn()::text`).Scan(&lsn)
	if err == nil && lsn != nil {
		if p, err := parseLSN(*lsn); err == nil {
			r.sawReplay(p, asked)
		}
	} else if err != nil && ctx.Err() == nil && r.failed(time.Now()) {
		rs.log.WarnContext(ctx, "read replica left out", "replica", r.addr, "error", err)
	}
	p, _ := r.replayPosition()
	return p
}

// read runs a marked read for user: on a replica that can answer it, else on the primary; a
// read a replica fails (other than for what the request holds) runs again on the primary. run
// may thus run twice: it must build its work afresh each time.
func (rs *replicaSet) read(ctx context.Context, primary *pgxpool.Pool, user string, run func(pool *pgxpool.Pool, onReplica bool) error) error {
	need := max(readAfter(ctx), rs.recent.need(user, time.Now()))
	r := rs.pick(ctx, need)
	if r == nil {
		rs.primaryReads.Add(1)
		return run(primary, false)
	}
	err := run(r.pool, true)
	switch {
	case err == nil:
		rs.replicaReads.Add(1)
		return nil
	case ctx.Err() != nil:
		return err
	case errors.Is(err, ErrInvalid):
		// What the request holds: the primary would refuse it too.
		return err
	case errors.Is(err, ErrNotFound):
		// The replica may not have replayed what the caller learnt of elsewhere (another
		// process, another client): the primary decides.
		rs.primaryReads.Add(1)
		return run(primary, false)
	}
	if r.failed(time.Now()) {
		rs.log.WarnContext(ctx, "read replica failed a read; left out", "replica", r.addr, "error", err)
	}
	rs.retried.Add(1)
	rs.primaryReads.Add(1)
	return run(primary, false)
}

// stats reads the counters.
func (rs *replicaSet) stats() ReadStats {
	return ReadStats{Replica: rs.replicaReads.Load(), Primary: rs.primaryReads.Load(),
		Retried: rs.retried.Load(), Checks: rs.checks.Load()}
}

// recentWrites is the last write position of each user who wrote through this process within
// window: such a user's reads need it, whether their request carries a position or not.
type recentWrites struct {
	window time.Duration

	mu      sync.Mutex
	m       map[string]recentWrite
	pruneAt int
}

type recentWrite struct {
	pos Position
	at  time.Time
}

// note records user's write at position p.
func (w *recentWrites) note(user string, p Position, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]recentWrite{}
	}
	if old, ok := w.m[user]; ok && old.pos > p && now.Sub(old.at) < w.window {
		p = old.pos
	}
	w.m[user] = recentWrite{pos: p, at: now}
	if len(w.m) >= w.pruneAt {
		for u, rw := range w.m {
			if now.Sub(rw.at) >= w.window {
				delete(w.m, u)
			}
		}
		w.pruneAt = 2*len(w.m) + 1024
	}
}

// need is the position user's reads need for their own writes through this process, 0 when
// none is recent.
func (w *recentWrites) need(user string, now time.Time) Position {
	if user == "" {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	rw, ok := w.m[user]
	if !ok || now.Sub(rw.at) >= w.window {
		return 0
	}
	return rw.pos
}

// WritePosition is the position of a request's writes: after the last of them, read on the
// primary once the request's work is done, for its answer to carry. ok is false without read
// replicas, or when ctx (see NoteWrites) ran nothing on the primary outside MayReadReplica. It
// also records the position for the users written to, whose reads through this process need
// it for a while (recentWindow) even when their requests carry none. When the primary cannot
// say, those users' reads go to the primary for that while.
func (s *Store) WritePosition(ctx context.Context) (Position, bool, error) {
	n, _ := ctx.Value(writeNotesKey{}).(*writeNotes)
	if s.replicas == nil || n == nil {
		return 0, false, nil
	}
	n.mu.Lock()
	touched, users := n.touched, n.users
	n.mu.Unlock()
	if !touched {
		return 0, false, nil
	}
	var lsn string
	err := s.pool.QueryRow(ctx, `select pg_current_wal_insert_lsn()::text`).Scan(&lsn)
	var p Position
	if err == nil {
		p, err = parseLSN(lsn)
	}
	now := time.Now()
	if err != nil {
		for _, u := range users {
			s.replicas.recent.note(u, Position(1<<63), now)
		}
		return 0, false, interpret(err)
	}
	for _, u := range users {
		s.replicas.recent.note(u, p, now)
	}
	return p, true, nil
}

// ReadStats counts where the reads that may go to a replica went; zero without replicas.
func (s *Store) ReadStats() ReadStats {
	if s.replicas == nil {
		return ReadStats{}
	}
	return s.replicas.stats()
}

// Replicas is the number of read replicas configured.
func (s *Store) Replicas() int {
	if s.replicas == nil {
		return 0
	}
	return len(s.replicas.list)
}
