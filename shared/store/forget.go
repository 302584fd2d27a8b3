package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/memory"
)

// ForgetParams names whose data to erase.
type ForgetParams struct {
	UserID string
	// TenantID limits the erasure to one tenant ("" is the tenant-less one) unless AllTenants.
	TenantID string
	// AllTenants erases the user's rows of every tenant (a service's erasure of a person).
	AllTenants bool
	// AsUser runs the erasure as the user itself, under row-level security with the user's
	// claims, wherever CallerRole may delete; tables only the service may write are
	// erased as service_role with the same filter. AsUser requires !AllTenants.
	AsUser bool
}

// userTable is a table of schema agentmem with a user_id column.
type userTable struct {
	name       string
	userType   string
	hasTenant  bool
	userDelete bool // CallerRole may delete from it
}

// userTablesSQL finds, at run time, every table of schema agentmem that has a user_id column,
// so a table added later is erased without anyone remembering to list it here.
const userTablesSQL = `
select c.relname::text, pg_catalog.format_type(u.atttypid, u.atttypmod),
       exists (select 1 from pg_catalog.pg_attribute t
               where t.attrelid = c.oid and t.attname = 'tenant_id' and t.attnum > 0 and not t.attisdropped),
       pg_catalog.has_table_privilege('` + CallerRole + `', c.oid, 'DELETE')
from pg_catalog.pg_class c
join pg_catalog.pg_namespace n on n.oid = c.relnamespace
join pg_catalog.pg_attribute u on u.attrelid = c.oid and u.attname = 'user_id' and u.attnum > 0 and not u.attisdropped
where n.nspname = 'agentmem' and c.relkind in ('r', 'p') and not c.relispartition
order by 1`

// foreignKeysSQL lists which tables of schema agentmem reference which.
const foreignKeysSQL = `
select src.relname::text, dst.relname::text
from pg_catalog.pg_constraint con
join pg_catalog.pg_class src on src.oid = con.conrelid
join pg_catalog.pg_namespace sn on sn.oid = src.relnamespace
join pg_catalog.pg_class dst on dst.oid = con.confrelid
join pg_catalog.pg_namespace dn on dn.oid = dst.relnamespace
where con.contype = 'f' and sn.nspname = 'agentmem' and dn.nspname = 'agentmem' and src.oid <> dst.oid`

// userTables returns the tables with user rows, each before the tables it references, so that
// counted deletes come before cascades.
func userTables(ctx context.Context, tx pgx.Tx) ([]userTable, error) {
	rows, err := tx.Query(ctx, userTablesSQL)
	if err != nil {
		return nil, fmt.Errorf("list user tables: %w", err)
	}
	tables, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (userTable, error) {
		var t userTable
		err := r.Scan(&t.name, &t.userType, &t.hasTenant, &t.userDelete)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("list user tables: %w", err)
	}
	rows, err = tx.Query(ctx, foreignKeysSQL)
	if err != nil {
		return nil, fmt.Errorf("list foreign keys: %w", err)
	}
	refs := map[string][]string{} // table -> tables it references
	var src, dst string
	if _, err := pgx.ForEachRow(rows, []any{&src, &dst}, func() error {
		refs[src] = append(refs[src], dst)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("list foreign keys: %w", err)
	}
	for counts, source := range countsOf {
		refs[counts] = append(refs[counts], source)
	}
	return referencingFirst(tables, refs), nil
}

// countsOf names the tables whose rows triggers of another table keep (the word counts): each
// is erased before its source, as if it referenced it, so that the erasure's answer counts its
// rows rather than the triggers taking them unseen.
var countsOf = map[string]string{"memory_words": "memories", "message_words": "messages", "message_words_pending": "messages"}

// referencingFirst orders tables so that each comes before every table it references (by
// name where the references leave a choice, and in name order for any cycle).
func referencingFirst(tables []userTable, refs map[string][]string) []userTable {
	in := map[string]bool{}
	for _, t := range tables {
		in[t.name] = true
	}
	// referencedBy counts, per table, the not yet placed tables that reference it.
	referencedBy := map[string]int{}
	for _, t := range tables {
		for _, d := range refs[t.name] {
			if in[d] {
				referencedBy[d]++
			}
		}
	}
	out := make([]userTable, 0, len(tables))
	placed := map[string]bool{}
	for len(out) < len(tables) {
		progress := false
		for _, t := range tables {
			if placed[t.name] || referencedBy[t.name] > 0 {
				continue
			}
			placed[t.name], progress = true, true
			out = append(out, t)
			for _, d := range refs[t.name] {
				if in[d] {
					referencedBy[d]--
				}
			}
		}
		if !progress { // a cycle: place the rest by name
			for _, t := range tables {
				if !placed[t.name] {
					placed[t.name] = true
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// ForgetUser erases every row of a user in every table of schema agentmem that has a user_id
// column, in one transaction: all of it or, on any error, none. Rows that hang off the user's
// rows through foreign keys (without a user_id of their own) go with them by cascade.
//
// It takes the user's advisory lock in exclusive mode first (see setClaimsSQL): transactions of
// the user in flight finish before it starts, and those that start meanwhile wait until it
// commits, so it erases everything committed before it and never a row committed while it ran.
// It then locks the user's sessions before any other row, in the order a commit takes its locks
// (the session, then what hangs off it and the memories), for writers that bypass the user lock
// (the sweep, which skips locked rows).
func (s *Store) ForgetUser(ctx context.Context, p ForgetParams) (memory.ForgetResult, error) {
	res := memory.ForgetResult{UserID: p.UserID, Deleted: map[string]int64{}}
	if !p.AllTenants {
		t := p.TenantID
		res.TenantID = &t
	}
	if p.AsUser && p.AllTenants {
		return res, fmt.Errorf("forget user: a user erases within its own tenant only")
	}
	if p.UserID == memory.SharedUserID {
		// The owner of the shared memories is no user: an erasure never reaches them.
		return res, fmt.Errorf("forget user: no user id")
	}
	err := s.asServiceRole(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, lockUserSQL, p.UserID); err != nil {
			return fmt.Errorf("lock user: %w", err)
		}
		role := "service_role"
		if p.AsUser {
			if err := setScope(ctx, tx, memory.Scope{TenantID: p.TenantID, UserID: p.UserID}); err != nil {
				return err
			}
			role = CallerRole
		}
		q, args := forgetSQL(userTable{name: "sessions", userType: "uuid", hasTenant: true}, p, "select 1 from")
		if _, err := tx.Exec(ctx, q+" for update", args...); err != nil {
			return fmt.Errorf("lock sessions: %w", err)
		}
		tables, err := userTables(ctx, tx)
		if err != nil {
			return err
		}
		// Then the rows whose word counts are erased before them (the sources of countsOf), as
		// every writer of the counts does: the row first, its counts after. The sweep, which
		// takes no user's lock, could otherwise hold a row and wait for counts the erasure had
		// taken.
		sources := map[string]bool{}
		for _, source := range countsOf {
			sources[source] = true
		}
		for _, t := range tables {
			if !sources[t.name] {
				continue
			}
			q, args := forgetSQL(t, p, "select 1 from")
			if _, err := tx.Exec(ctx, q+" for update", args...); err != nil {
				return fmt.Errorf("lock %s: %w", t.name, err)
			}
		}
		for _, t := range tables {
			want := "service_role"
			if p.AsUser && t.userDelete {
				want = CallerRole
			}
			if want != role {
				if _, err := tx.Exec(ctx, `select set_config('role', $1::text, true)`, want); err != nil {
					return fmt.Errorf("set role: %w", err)
				}
				role = want
			}
			q, args := forgetSQL(t, p, "delete from")
			tag, err := tx.Exec(ctx, q, args...)
			if err != nil {
				return fmt.Errorf("forget user in %s: %w", t.name, err)
			}
			res.Deleted[t.name] = tag.RowsAffected()
		}
		if !s.outboxOn() {
			return nil
		}
		// The adapters learn of the erasure, after the user's earlier jobs went with the rest.
		if role != "service_role" {
			if _, err := tx.Exec(ctx, setServiceRoleSQL, statementTimeout(ctx)); err != nil {
				return fmt.Errorf("set role: %w", err)
			}
		}
		_, _, err = s.enqueue(ctx, tx, change{intent: adapter.UserForgotten,
			sc: memory.Scope{TenantID: p.TenantID, UserID: p.UserID}, refs: userRefs{AllTenants: p.AllTenants}})
		return err
	})
	return res, err
}

// forgetSQL is verb ("delete from", "select 1 from") applied to the rows of the user in t.
func forgetSQL(t userTable, p ForgetParams, verb string) (string, []any) {
	q := verb + " agentmem." + pgx.Identifier{t.name}.Sanitize()
	if t.userType == "text" {
		q += " where user_id = $1::text"
	} else {
		// A table added later may key its users otherwise (by uuid): a UUID's text is the id.
		q += " where user_id::text = $1::text"
	}
	args := []any{p.UserID}
	if !p.AllTenants && t.hasTenant {
		q += " and tenant_id = $2::text"
		args = append(args, p.TenantID)
	}
	if t.name == "jobs" {
		// An earlier erasure's jobs stay (they hold no content): the adapters must still hear
		// of it, whatever the scope of this one (agentmem.erase_user does the same).
		q += " and intent <> '" + adapter.UserForgotten + "'"
	}
	return q, args
}
