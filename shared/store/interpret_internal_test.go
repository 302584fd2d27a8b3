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

	"github.com/agentmem/agentmem/shared/apierror"
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
		want apierror.Code // "" for an error left internal
	}{
		// Timeouts and cancellations.
		{"deadline exceeded", func() error { return context.DeadlineExceeded }, apierror.Unavailable},
		{"canceled, wrapped", func() error { return wrapped(context.Canceled) }, apierror.Unavailable},
		{"statement timeout 57014", func() error { return pgErr("57014", "ERROR", "canceling statement due to statement timeout") }, apierror.Unavailable},

		// PostgreSQL restarting, shutting down, overloaded.
		{"admin shutdown 57P01", func() error {
			return pgErr("57P01", "FATAL", "terminating connection due to administrator command")
		}, apierror.Unavailable},
		{"crash shutdown 57P02", func() error {
			return pgErr("57P02", "FATAL", "terminating connection because of crash of another server process")
		}, apierror.Unavailable},
		{"starting up 57P03", func() error { return pgErr("57P03", "FATAL", "the database system is starting up") }, apierror.Unavailable},
		{"shutting down 57P03", func() error { return pgErr("57P03", "FATAL", "the database system is shutting down") }, apierror.Unavailable},
		{"idle session timeout 57P05", func() error {
			return pgErr("57P05", "FATAL", "terminating connection due to idle-session timeout")
		}, apierror.Unavailable},
		{"too many connections 53300", func() error {
			return pgErr("53300", "FATAL", "sorry, too many clients already")
		}, apierror.Unavailable},
		{"out of memory 53200", func() error { return pgErr("53200", "ERROR", "out of memory") }, apierror.Unavailable},
		{"connection failure 08006", func() error { return pgErr("08006", "FATAL", "connection failure") }, apierror.Unavailable},
		{"serialization failure 40001", func() error {
			return pgErr("40001", "ERROR", "could not serialize access due to concurrent update")
		}, apierror.Unavailable},
		{"deadlock 40P01", func() error { return pgErr("40P01", "ERROR", "deadlock detected") }, apierror.Unavailable},
		{"lock not available 55P03", func() error { return pgErr("55P03", "ERROR", "could not obtain lock") }, apierror.Unavailable},

		// What PgBouncer says when its server goes away (always SQLSTATE 08P01).
		{"pgbouncer server conn crashed", func() error {
			return wrapped(pgErr("08P01", "FATAL", "server conn crashed?"))
		}, apierror.Unavailable},
		{"pgbouncer login failing, starting up", func() error {
			return pgErr("08P01", "FATAL", "server login has been failing, cached error: the database system is starting up (server_login_retry)")
		}, apierror.Unavailable},
		{"pgbouncer login failing, shutting down", func() error {
			return pgErr("08P01", "FATAL", "server login has been failing, cached error: the database system is shutting down (server_login_retry)")
		}, apierror.Unavailable},
		{"pgbouncer cannot connect", func() error { return pgErr("08P01", "ERROR", "pgbouncer cannot connect to server") }, apierror.Unavailable},
		{"pgbouncer query_wait_timeout", func() error { return pgErr("08P01", "FATAL", "query_wait_timeout") }, apierror.Unavailable},
		{"pooler forwards admin shutdown", func() error {
			return wrapped(pgErr("57P01", "FATAL", "terminating connection due to administrator command"))
		}, apierror.Unavailable},
		// Supavisor, Supabase's pooler, gives its own errors SQLSTATE XX000.
		{"supavisor handler exited", func() error {
			return pgErr("XX000", "FATAL", "(EDBHANDLEREXITED) connection to database closed. Check logs for more information")
		}, apierror.Unavailable},
		{"server closed the connection unexpectedly", func() error {
			return pgErr("XX000", "ERROR", "server closed the connection unexpectedly")
		}, apierror.Unavailable},

		// The socket closed or broke under the driver.
		{"io.EOF", func() error { return io.EOF }, apierror.Unavailable},
		{"unexpected EOF, wrapped", func() error { return wrapped(io.ErrUnexpectedEOF) }, apierror.Unavailable},
		{"unexpected EOF, bare", func() error { return io.ErrUnexpectedEOF }, apierror.Unavailable},
		{"connection reset", func() error {
			return wrapped(&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)})
		}, apierror.Unavailable},
		{"broken pipe", func() error { return wrapped(os.NewSyscallError("write", syscall.EPIPE)) }, apierror.Unavailable},
		{"connection refused, bare errno", func() error { return syscall.ECONNREFUSED }, apierror.Unavailable},
		{"use of closed network connection", func() error { return wrapped(net.ErrClosed) }, apierror.Unavailable},
		{"driver's conn closed", func() error { return wrapped(pgconn.ErrConnClosed) }, apierror.Unavailable},
		{"failed connect", refused, apierror.Unavailable},
		{"closed pool", closedPool, apierror.Unavailable},
		{"closed pool, bare", func() error { return puddle.ErrClosedPool }, apierror.Unavailable},
		{"pool gave up acquiring", func() error {
			return errors.New("pgxpool: too many failed attempts acquiring connection; likely bug in PrepareConn, BeforeAcquire, or ShouldPing hook")
		}, apierror.Unavailable},

		// What a client can send.
		{"untranslatable character 22P05", func() error { return pgErr("22P05", "ERROR", "unsupported Unicode escape sequence") }, apierror.InvalidRequest},
		{"invalid byte sequence 22021", func() error { return pgErr("22021", "ERROR", "invalid byte sequence") }, apierror.InvalidRequest},
		{"program limit 54000", func() error { return pgErr("54000", "ERROR", "string is too long for tsvector") }, apierror.InvalidRequest},

		// Bugs stay internal errors (500).
		{"unique violation 23505", func() error { return pgErr("23505", "ERROR", "duplicate key value violates unique constraint") }, ""},
		{"undefined column 42703", func() error { return pgErr("42703", "ERROR", "column does not exist") }, ""},
		{"protocol-unrelated error", func() error { return errors.New("decode row: unexpected type") }, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cause := tt.err()
			err := interpret(cause)
			if !errors.Is(err, cause) {
				t.Errorf("interpret(%v) = %v: the cause is lost", cause, err)
			}
			var ae *apierror.Error
			if !errors.As(err, &ae) {
				if tt.want != "" {
					t.Fatalf("interpret(%v) = %v, want %s", cause, err, tt.want)
				}
				if got := apierror.As(err).Code; got != apierror.Internal {
					t.Fatalf("interpret(%v) answers %s, want %s", cause, got, apierror.Internal)
				}
				return
			}
			if ae.Code != tt.want {
				t.Fatalf("interpret(%v) = %s, want %q", cause, ae.Code, tt.want)
			}
			if ae.RetryAfter != 0 {
				t.Errorf("interpret(%v): RetryAfter %d: how long to wait is the transport's policy, not the store's", cause, ae.RetryAfter)
			}
		})
	}
	t.Run("nil", func(t *testing.T) {
		t.Parallel()
		if err := interpret(nil); err != nil {
			t.Fatalf("interpret(nil) = %v", err)
		}
	})
	t.Run("apierror kept", func(t *testing.T) {
		t.Parallel()
		in := apierror.New(apierror.NotFound, "session not found")
		if err := interpret(wrapped(in)); !errors.Is(err, in) {
			t.Fatalf("interpret = %v, want the not_found error", err)
		}
	})
}
