package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/puddle/v2"

	"github.com/jackc/pgx/v5"
)

// pgErr is a server's (or pooler's) error with a SQLSTATE, a severity and a message.
func pgErr(code, severity, msg string) error {
	return &pgconn.PgError{Code: code, Severity: severity, SeverityUnlocalized: severity, Message: msg}
}

// wrapped wraps err as the store's statements do.
func wrapped(err error) error { return fmt.Errorf("insert messages: %w", err) }

// Every shape of error a database or pooler going away produces is unavailable (503 with
// Retry-After), what a client can send is invalid_request, and the rest stays internal.
func TestInterpret(t *testing.T) {
	t.Parallel()
	closedPool := func() error {
		pool, err := pgxpool.New(context.Background(), "postgresql://postgres:postgres@127.0.0.1:1/postgres")
		if err != nil {
			t.Fatal(err)
		}
		pool.Close()
		_, err = pool.Acquire(context.Background())
		return err
	}
	refused := func() error {
		// A real failed connect: nobody listens on port 1.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := pgconn.Connect(ctx, "postgresql://postgres:postgres@127.0.0.1:1/postgres?connect_timeout=2")
		return err
	}
	for _, tt := range []struct {
		name string
		err  func() error
		want error // the kind; nil for an error of none, the server's
	}{
		// Timeouts and cancellations.
		{"deadline exceeded", func() error { return context.DeadlineExceeded }, ErrUnavailable},
		{"canceled, wrapped", func() error { return wrapped(context.Canceled) }, ErrUnavailable},
		{"statement timeout 57014", func() error { return pgErr("57014", "ERROR", "canceling statement due to statement timeout") }, ErrUnavailable},

		// PostgreSQL restarting, shutting down, overloaded.
		{"admin shutdown 57P01", func() error {
			return pgErr("57P01", "FATAL", "terminating connection due to administrator command")
		}, ErrUnavailable},
		{"crash shutdown 57P02", func() error {
			return pgErr("57P02", "FATAL", "terminating connection because of crash of another server process")
		}, ErrUnavailable},
		{"starting up 57P03", func() error { return pgErr("57P03", "FATAL", "the database system is starting up") }, ErrUnavailable},
		{"shutting down 57P03", func() error { return pgErr("57P03", "FATAL", "the database system is shutting down") }, ErrUnavailable},
		{"idle session timeout 57P05", func() error {
			return pgErr("57P05", "FATAL", "terminating connection due to idle-session timeout")
		}, ErrUnavailable},
		{"too many connections 53300", func() error {
			return pgErr("53300", "FATAL", "sorry, too many clients already")
		}, ErrUnavailable},
		{"out of memory 53200", func() error { return pgErr("53200", "ERROR", "out of memory") }, ErrUnavailable},
		{"connection failure 08006", func() error { return pgErr("08006", "FATAL", "connection failure") }, ErrUnavailable},
		{"serialization failure 40001", func() error {
			return pgErr("40001", "ERROR", "could not serialize access due to concurrent update")
		}, ErrUnavailable},
		{"deadlock 40P01", func() error { return pgErr("40P01", "ERROR", "deadlock detected") }, ErrUnavailable},
		{"lock not available 55P03", func() error { return pgErr("55P03", "ERROR", "could not obtain lock") }, ErrUnavailable},

		// What PgBouncer says when its server goes away (always SQLSTATE 08P01).
		{"pgbouncer server conn crashed", func() error {
			return wrapped(pgErr("08P01", "FATAL", "server conn crashed?"))
		}, ErrUnavailable},
		{"pgbouncer login failing, starting up", func() error {
			return pgErr("08P01", "FATAL", "server login has been failing, cached error: the database system is starting up (server_login_retry)")
		}, ErrUnavailable},
		{"pgbouncer login failing, shutting down", func() error {
			return pgErr("08P01", "FATAL", "server login has been failing, cached error: the database system is shutting down (server_login_retry)")
		}, ErrUnavailable},
		{"pgbouncer cannot connect", func() error { return pgErr("08P01", "ERROR", "pgbouncer cannot connect to server") }, ErrUnavailable},
		{"pgbouncer query_wait_timeout", func() error { return pgErr("08P01", "FATAL", "query_wait_timeout") }, ErrUnavailable},
		{"pooler forwards admin shutdown", func() error {
			return wrapped(pgErr("57P01", "FATAL", "terminating connection due to administrator command"))
		}, ErrUnavailable},
		// Supavisor, Supabase's pooler, gives its own errors SQLSTATE XX000.
		{"supavisor handler exited", func() error {
			return pgErr("XX000", "FATAL", "(EDBHANDLEREXITED) connection to database closed. Check logs for more information")
		}, ErrUnavailable},
		{"server closed the connection unexpectedly", func() error {
			return pgErr("XX000", "ERROR", "server closed the connection unexpectedly")
		}, ErrUnavailable},

		// The socket closed or broke under the driver.
		{"io.EOF", func() error { return io.EOF }, ErrUnavailable},
		{"unexpected EOF, wrapped", func() error { return wrapped(io.ErrUnexpectedEOF) }, ErrUnavailable},
		{"unexpected EOF, bare", func() error { return io.ErrUnexpectedEOF }, ErrUnavailable},
		{"connection reset", func() error {
			return wrapped(&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)})
		}, ErrUnavailable},
		{"broken pipe", func() error { return wrapped(os.NewSyscallError("write", syscall.EPIPE)) }, ErrUnavailable},
		{"connection refused, bare errno", func() error { return syscall.ECONNREFUSED }, ErrUnavailable},
		{"use of closed network connection", func() error { return wrapped(net.ErrClosed) }, ErrUnavailable},
		{"driver's conn closed", func() error { return wrapped(pgconn.ErrConnClosed) }, ErrUnavailable},
		{"failed connect", refused, ErrUnavailable},
		{"closed pool", closedPool, ErrUnavailable},
		{"closed pool, bare", func() error { return puddle.ErrClosedPool }, ErrUnavailable},
		{"pool gave up acquiring", func() error {
			return errors.New("pgxpool: too many failed attempts acquiring connection; likely bug in PrepareConn, BeforeAcquire, or ShouldPing hook")
		}, ErrUnavailable},

		// What a client can send.
		{"untranslatable character 22P05", func() error { return pgErr("22P05", "ERROR", "unsupported Unicode escape sequence") }, ErrInvalid},
		{"invalid byte sequence 22021", func() error { return pgErr("22021", "ERROR", "invalid byte sequence") }, ErrInvalid},
		{"program limit 54000", func() error { return pgErr("54000", "ERROR", "string is too long for tsvector") }, ErrInvalid},

		// What the code that expects it describes (see notFoundAs, memoryKeyTaken).
		{"no rows", func() error { return wrapped(pgx.ErrNoRows) }, ErrNotFound},
		{"row-level security 42501", func() error {
			return pgErr("42501", "ERROR", `new row violates row-level security policy for table "sessions"`)
		}, ErrNotFound},
		{"unique violation 23505", func() error { return pgErr("23505", "ERROR", "duplicate key value violates unique constraint") }, ErrConflict},

		// Bugs stay errors of no kind (500).
		{"undefined column 42703", func() error { return pgErr("42703", "ERROR", "column does not exist") }, nil},
		{"protocol-unrelated error", func() error { return errors.New("decode row: unexpected type") }, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cause := tt.err()
			err := interpret(cause)
			if !errors.Is(err, cause) {
				t.Errorf("interpret(%v) = %v: the cause is lost", cause, err)
			}
			var se *Error
			if !errors.As(err, &se) {
				if tt.want != nil {
					t.Fatalf("interpret(%v) = %v, want %v", cause, err, tt.want)
				}
				return
			}
			if tt.want == nil || !errors.Is(err, tt.want) {
				t.Fatalf("interpret(%v) = %v, want kind %v", cause, err, tt.want)
			}
			// Not found and conflict say nothing until the code that expects them does; the
			// others tell the caller what to do.
			if described := se.Detail != ""; described != (tt.want == ErrUnavailable || tt.want == ErrInvalid) {
				t.Errorf("interpret(%v): detail %q", cause, se.Detail)
			}
		})
	}
	t.Run("nil", func(t *testing.T) {
		t.Parallel()
		if err := interpret(nil); err != nil {
			t.Fatalf("interpret(nil) = %v", err)
		}
	})
	t.Run("kind kept", func(t *testing.T) {
		t.Parallel()
		in := notFound("session not found")
		if err := interpret(wrapped(in)); !errors.Is(err, in) {
			t.Fatalf("interpret = %v, want the not_found error", err)
		}
	})
}
