package store

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// The upsert's errors that interpret answers invalid_request, and a nesting too deep for the
// server, name the value; every other error is left to interpret.
func TestUserMemoryValueError(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		code  string
		value bool
	}{
		{"22P02", true}, // invalid input syntax: an unpaired surrogate escape
		{"22P05", true}, // untranslatable character
		{"22003", true}, // a number beyond numeric's range
		{"54001", true}, // nesting deeper than the server's stack
		{"57014", false},
		{"40001", false},
		{"23505", false},
		{"42501", false},
	} {
		t.Run(tt.code, func(t *testing.T) {
			t.Parallel()
			cause := fmt.Errorf("upsert user memory: %w", &pgconn.PgError{Code: tt.code})
			err := userMemoryValueError(cause)
			var se *Error
			named := errors.As(err, &se) && se.Kind == ErrInvalid && se.Field == "value"
			if named != tt.value {
				t.Fatalf("%s: %v names the value: %v", tt.code, err, named)
			}
			if !tt.value && err != cause {
				t.Fatalf("%s: %v, want the error unchanged", tt.code, err)
			}
		})
	}
}
