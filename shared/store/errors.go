package store

import (
	"errors"
	"fmt"
	"strings"
)

// The kinds of the store's errors: what a failure means to whoever asked, whatever the database
// said. interpret translates the database's errors into them, once; the use cases decide what
// their callers see of each (shared/app). An *Error is of one kind: errors.Is(err, ErrNotFound).
var (
	// ErrNotFound is the kind of a row the request named that is missing or not the caller's:
	// the query found no row, or row-level security refused the caller's write of it.
	ErrNotFound = errors.New("not found")
	// ErrConflict is the kind of a request that contradicts what is stored: an Idempotency-Key
	// used with another request, a memory changed since it was read, a job in a state that
	// does not allow the change.
	ErrConflict = errors.New("conflict")
	// ErrForbidden is the kind of a change of a row the caller sees but may not change.
	ErrForbidden = errors.New("forbidden")
	// ErrInvalid is the kind of a value the database cannot store (text it cannot encode, too
	// long for an index, JSON nested too deep) or an edit over a limit: the request must change,
	// a retry cannot help.
	ErrInvalid = errors.New("invalid")
	// ErrUnavailable is the kind of a database that is busy, restarting or unreachable, or of a
	// request that ran out of time: nothing was written, and a retry may succeed.
	ErrUnavailable = errors.New("unavailable")
)

// Error is a failure of one of the store's kinds, with what the caller may be told of it.
type Error struct {
	// Kind is ErrNotFound, ErrConflict, ErrForbidden, ErrInvalid or ErrUnavailable.
	Kind error
	// Detail says what failed in words safe to show the caller (no content, no SQL). It is
	// empty when the store did not expect the failure (a row missing where one must be): the
	// caller then learns nothing of it, and the failure is the server's.
	Detail string
	// Field is the part of the request at fault (e.g. "content"), for ErrInvalid, when known,
	// and FieldIssue what is wrong with it; Detail says both.
	Field, FieldIssue string
	// Err is the cause, for the log; nil when the store itself decided.
	Err error
}

func (e *Error) Error() string {
	msg := e.Kind.Error()
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap is the cause, so that errors.Is finds ErrConnectionLost or pgx.ErrNoRows in it.
func (e *Error) Unwrap() error { return e.Err }

// Is makes an Error one of its kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// SpanCode names the kind in a span's status (see telemetry.Span.End): "not_found".
func (e *Error) SpanCode() string { return strings.ReplaceAll(e.Kind.Error(), " ", "_") }

// notFound is a not-found error that says what was not found.
func notFound(detail string) error { return &Error{Kind: ErrNotFound, Detail: detail} }

// conflict is a conflict error that says what the request contradicts.
func conflict(detail string) error { return &Error{Kind: ErrConflict, Detail: detail} }

// conflictf is conflict with a formatted detail.
func conflictf(format string, args ...any) error {
	return &Error{Kind: ErrConflict, Detail: fmt.Sprintf(format, args...)}
}

// invalidField is an invalid error about one part of the request: issue says what is wrong
// with field, detail says it whole.
func invalidField(field, issue, detail string, cause error) error {
	return &Error{Kind: ErrInvalid, Detail: detail, Field: field, FieldIssue: issue, Err: cause}
}

// notFoundAs is err, interpreted, with detail as what it says when it is of kind ErrNotFound and
// says nothing yet (no row, or a write row-level security refused): "session not found" rather
// than a missing row.
func notFoundAs(err error, detail string) error {
	err = interpret(err)
	var se *Error
	if errors.As(err, &se) && se.Kind == ErrNotFound && se.Detail == "" {
		return &Error{Kind: ErrNotFound, Detail: detail, Err: se.Err}
	}
	return err
}

// isNotFound reports whether err, interpreted, is of kind ErrNotFound: for the reads where a
// missing row is an answer, not a failure.
func isNotFound(err error) bool { return errors.Is(interpret(err), ErrNotFound) }
