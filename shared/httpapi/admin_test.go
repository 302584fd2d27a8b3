package httpapi_test

import (
	"context"

	"github.com/jackc/pgx/v5"
)

func (e *env) adminConn() *pgx.Conn {
	e.t.Helper()
	conn, err := pgx.Connect(context.Background(), e.db.URL)
	if err != nil {
		e.t.Fatal(err)
	}
	return conn
}

func (e *env) exec(sql string, args ...any) {
	e.t.Helper()
	conn := e.adminConn()
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		e.t.Fatal(err)
	}
}
