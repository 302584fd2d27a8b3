package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Position is a place in the primary's write-ahead log (a pg_lsn): a write's answer carries the
// position after its commit, and a read that carries it back is served only by a server that
// has replayed that far, so that it sees the write (read-your-writes). Positions grow with
// every write, so the greater of two is the later.
type Position uint64

// positionDigits is the width of a position's text: fixed, so that two positions compare as
// strings as they do as numbers, and a client can keep the greater without reading it.
const positionDigits = 16

// ErrPosition is the error of a position's text that ParsePosition refuses.
var ErrPosition = errors.New("a position is 16 hexadecimal digits, as an earlier answer gave it")

// String is the text clients keep and send back: 16 upper-case hexadecimal digits.
func (p Position) String() string { return fmt.Sprintf("%016X", uint64(p)) }

// ParsePosition reads a position's text (Position.String).
func ParsePosition(s string) (Position, error) {
	if len(s) != positionDigits {
		return 0, ErrPosition
	}
	n, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return 0, ErrPosition
	}
	return Position(n), nil
}

// parseLSN reads PostgreSQL's text of a pg_lsn, "16/B374D848"; "" (SQL null) is 0.
func parseLSN(s string) (Position, error) {
	if s == "" {
		return 0, nil
	}
	hi, lo, ok := strings.Cut(s, "/")
	if !ok {
		return 0, fmt.Errorf("parse lsn %q", s)
	}
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parse lsn %q", s)
	}
	return Position(h<<32 | l), nil
}

type (
	readAfterKey   struct{}
	mayReplicaKey  struct{}
	writeNotesKey  struct{}
	primaryOnlyKey struct{}
)

// ReadAfter is ctx whose reads see at least what was committed up to p: a replica serves them
// only once it has replayed that far. The transport sets it from the position a request
// carries.
func ReadAfter(ctx context.Context, p Position) context.Context {
	if p == 0 {
		return ctx
	}
	return context.WithValue(ctx, readAfterKey{}, p)
}

// readAfter is the position ctx's reads must see, 0 for none.
func readAfter(ctx context.Context) Position {
	p, _ := ctx.Value(readAfterKey{}).(Position)
	return p
}

// MayReadReplica is ctx whose reads may be served by a read replica (Config.ReadURLs), within
// what ReadAfter and the caller's own recent writes require. Only the use cases whose answers
// may lag by Config.ReplicaMaxLag take it: the reads of a client's request (get-context,
// recall, history, lists), never the reads that decide a write (a summary's messages, a job's
// state), which a lagging replica would make wrong.
func MayReadReplica(ctx context.Context) context.Context {
	return context.WithValue(ctx, mayReplicaKey{}, true)
}

// PrimaryOnly is ctx whose reads go to the primary even within MayReadReplica: for a read whose
// answer is kept beside a check made on the primary (the get-context cache's fill).
func PrimaryOnly(ctx context.Context) context.Context {
	return context.WithValue(ctx, primaryOnlyKey{}, true)
}

// mayReadReplica reports whether ctx's reads may go to a replica.
func mayReadReplica(ctx context.Context) bool {
	ok, _ := ctx.Value(mayReplicaKey{}).(bool)
	primary, _ := ctx.Value(primaryOnlyKey{}).(bool)
	return ok && !primary
}

// writeNotes records which users' data a request's transactions on the primary touched, so
// that its answer can carry a position (Store.WritePosition).
type writeNotes struct {
	mu      sync.Mutex
	touched bool
	users   []string
}

// NoteWrites is ctx in which the store records the transactions run on the primary outside
// MayReadReplica (the writes), for Store.WritePosition at the end of the request.
func NoteWrites(ctx context.Context) context.Context {
	return context.WithValue(ctx, writeNotesKey{}, &writeNotes{})
}

// noteWrite records, in ctx's notes when it has them, a transaction on the primary for user
// ("" for one of no user's scope) outside MayReadReplica.
func noteWrite(ctx context.Context, user string) {
	if mayReadReplica(ctx) {
		return
	}
	n, _ := ctx.Value(writeNotesKey{}).(*writeNotes)
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.touched = true
	if user != "" && len(n.users) < 8 && !slices.Contains(n.users, user) {
		n.users = append(n.users, user)
	}
}
