package app

import (
	"encoding/base64"
	"encoding/binary"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/store"
)

// A cursor is opaque to clients: base64url (unpadded) of a kind byte and the key of the last
// item of the page. The kind keeps a cursor of one listing from being taken by another.
const (
	cursorSessions      = 's'
	cursorMemories      = 'm'
	cursorHistoryNewest = 'n'
	cursorHistoryOldest = 'o'
	cursorUserNewest    = 'N'
	cursorUserOldest    = 'O'
	cursorJobs          = 'j'
)

// Keys outside these bounds were never issued; keeping them out also keeps every decoded time
// within what PostgreSQL's timestamptz holds.
var (
	cursorMinMicros = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	cursorMaxMicros = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC).UnixMicro()
)

const cursorInvalid = "is not a cursor of this listing; pass next_cursor of the previous page unchanged"

// decodeCursor reads a cursor's bytes. encoding/base64 skips \r and \n even when strict, so
// they are refused first: a cursor is read only as it was written.
func decodeCursor(v string) ([]byte, error) {
	if strings.ContainsAny(v, "\r\n") {
		return nil, base64.CorruptInputError(strings.IndexAny(v, "\r\n"))
	}
	return base64.RawURLEncoding.Strict().DecodeString(v)
}

// cursorAfterKey is the cursor after an item ordered by (time, id).
func cursorAfterKey(kind byte, t time.Time, id uuid.UUID) string {
	b := make([]byte, 0, 25)
	b = append(b, kind)
	b = binary.BigEndian.AppendUint64(b, uint64(t.UnixMicro()))
	b = append(b, id[:]...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// cursorKeyOf reads a cursor of cursorAfterKey; ok is false when there is none or it is
// invalid (then recorded in f).
func cursorKeyOf(f *apierror.Fields, kind byte, v *string) (time.Time, uuid.UUID, bool) {
	if v == nil {
		return time.Time{}, uuid.Nil, false
	}
	b, err := decodeCursor(*v)
	if err != nil || len(b) != 25 || b[0] != kind {
		f.Add("cursor", cursorInvalid)
		return time.Time{}, uuid.Nil, false
	}
	us := int64(binary.BigEndian.Uint64(b[1:9]))
	if us < cursorMinMicros || us > cursorMaxMicros {
		f.Add("cursor", cursorInvalid)
		return time.Time{}, uuid.Nil, false
	}
	id, _ := uuid.FromBytes(b[9:])
	return time.UnixMicro(us).UTC(), id, true
}

// cursorAfterSeq is the cursor after a message of a history in order.
func cursorAfterSeq(order string, seq int64) string {
	kind := byte(cursorHistoryOldest)
	if order == historyNewest {
		kind = cursorHistoryNewest
	}
	b := binary.BigEndian.AppendUint64([]byte{kind}, uint64(seq))
	return base64.RawURLEncoding.EncodeToString(b)
}

// cursorSeqOf reads a cursor of cursorAfterSeq; a cursor of the other order is invalid.
func cursorSeqOf(f *apierror.Fields, order string, v *string) *int64 {
	b := orderedCursor(f, order, v, cursorHistoryNewest, cursorHistoryOldest, 9)
	if b == nil {
		return nil
	}
	seq := int64(binary.BigEndian.Uint64(b[1:]))
	if seq < 0 {
		f.Add("cursor", cursorInvalid)
		return nil
	}
	return &seq
}

// orderedCursor is the bytes of cursor v of n bytes that pages a history in order: its first
// byte is newest's kind or oldest's. It adds the cursor's problem to f and returns nil when v is
// not such a cursor, or is one of the other order; nil for a nil v too.
func orderedCursor(f *apierror.Fields, order string, v *string, newest, oldest byte, n int) []byte {
	if v == nil {
		return nil
	}
	kind := oldest
	if order == historyNewest {
		kind = newest
	}
	b, err := decodeCursor(*v)
	if err != nil || len(b) != n {
		f.Add("cursor", cursorInvalid)
		return nil
	}
	if b[0] != kind {
		if b[0] == newest || b[0] == oldest {
			f.Add("cursor", "belongs to the other order; page with the order it was issued for")
		} else {
			f.Add("cursor", cursorInvalid)
		}
		return nil
	}
	return b
}

// cursorAfterMessage is the cursor after a message of a user's history in order: the kind,
// the creation time in microseconds, the session id and the seq.
func cursorAfterMessage(order string, k store.MessageKey) string {
	kind := byte(cursorUserOldest)
	if order == historyNewest {
		kind = cursorUserNewest
	}
	b := make([]byte, 0, 33)
	b = append(b, kind)
	b = binary.BigEndian.AppendUint64(b, uint64(k.CreatedAt.UnixMicro()))
	b = append(b, k.SessionID[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(k.Seq))
	return base64.RawURLEncoding.EncodeToString(b)
}

// cursorMessageOf reads a cursor of cursorAfterMessage; a cursor of the other order, or of a
// session's history, is invalid.
func cursorMessageOf(f *apierror.Fields, order string, v *string) *store.MessageKey {
	b := orderedCursor(f, order, v, cursorUserNewest, cursorUserOldest, 33)
	if b == nil {
		return nil
	}
	us := int64(binary.BigEndian.Uint64(b[1:9]))
	seq := int64(binary.BigEndian.Uint64(b[25:]))
	if us < cursorMinMicros || us > cursorMaxMicros || seq < 0 {
		f.Add("cursor", cursorInvalid)
		return nil
	}
	sid, _ := uuid.FromBytes(b[9:25])
	return &store.MessageKey{CreatedAt: time.UnixMicro(us).UTC(), SessionID: sid, Seq: seq}
}

// keyCursor writes and reads the cursors of a listing ordered by (time, id) whose store key is
// K: the listings of sessions, memories and jobs differ only in the kind and the key's fields.
type keyCursor[K any] struct {
	kind byte
	key  func(time.Time, uuid.UUID) K
	at   func(K) (time.Time, uuid.UUID)
}

var (
	sessionsCursor = keyCursor[store.SessionKey]{kind: cursorSessions,
		key: func(t time.Time, id uuid.UUID) store.SessionKey { return store.SessionKey{LastActiveAt: t, ID: id} },
		at:  func(k store.SessionKey) (time.Time, uuid.UUID) { return k.LastActiveAt, k.ID }}
	memoriesCursor = keyCursor[store.MemoryKey]{kind: cursorMemories,
		key: func(t time.Time, id uuid.UUID) store.MemoryKey { return store.MemoryKey{CreatedAt: t, ID: id} },
		at:  func(k store.MemoryKey) (time.Time, uuid.UUID) { return k.CreatedAt, k.ID }}
	jobsCursor = keyCursor[store.JobKey]{kind: cursorJobs,
		key: func(t time.Time, id uuid.UUID) store.JobKey { return store.JobKey{CreatedAt: t, ID: id} },
		at:  func(k store.JobKey) (time.Time, uuid.UUID) { return k.CreatedAt, k.ID }}
)

// after is the key a request's cursor continues after: nil without a cursor, or when it is
// invalid (then recorded in f).
func (c keyCursor[K]) after(f *apierror.Fields, v *string) *K {
	t, id, ok := cursorKeyOf(f, c.kind, v)
	if !ok {
		return nil
	}
	k := c.key(t, id)
	return &k
}

// next is the next_cursor of a page the store continues after next.
func (c keyCursor[K]) next(next *K) *string {
	return nextCursor(next, func(k K) string {
		t, id := c.at(k)
		return cursorAfterKey(c.kind, t, id)
	})
}

// nextCursor is the next_cursor of every listing: nil on the last page (next is nil), else
// the cursor write makes of the key the page continues after.
func nextCursor[K any](next *K, write func(K) string) *string {
	if next == nil {
		return nil
	}
	cur := write(*next)
	return &cur
}
