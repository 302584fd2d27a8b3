package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
)

// The rule: which messages the cap may move. A message of a session whose cap is K > 0 moves
// (to the archive, or is deleted) only when all of these hold, in one statement's snapshot:
//
//  1. It is older than the K newest unexpired messages of its session, and the session holds
//     at least K of them: K live messages always stay.
//  2. It is older than the memory.MaxContextMessages (500) newest unexpired messages that
//     get-context's answers_only keeps (not a tool message, not an assistant message without
//     text): no window of get-context, whatever its max_messages, answers_only or since, reads
//     further back than these and K (K is at least 500) reach, so a window is the same with
//     or without the archive. (With a summary, the window begins after its through_seq, within
//     the same rows.)
//  3. It expires no later than every message rules 1 and 2 keep: it can never come back into a
//     window when a newer message expires before it (explicit ttl_seconds differ per turn).
//  4. Its rolling summary covers it (seq at most the summary's through_seq); in a deployment
//     that makes summaries (store.Config.Summaries), a session without a summary moves nothing:
//     the summary job reads the unsummarised messages from the live table, so the summary never
//     loses one and get-context never shows a gap.
//  5. It is unexpired (expired messages are the sweep's to delete) and its client id is not
//     already archived in its session.
//
// What stays true: seq numbering (the session's counter) never moves back; a deleted live
// message does not bring an archived one back into the window (it is as if it had been
// deleted from the end of the window's reach).
//
// The sweep looks at a session once it has 100 messages more than at its last look
// (sessions_history_unchecked_idx), a few sessions per statement and a bounded number of
// messages per session, each statement one short transaction that skips sessions and messages
// a live request holds, and marks the session looked at once nothing more may move (not when
// it skipped a message a request held: the next sweep takes it).
var capHistorySQL = `
with cand as (
  select s.user_id, s.id, coalesce(s.keep_messages, $1::int) as keep, s.last_seq
  from agentmem.sessions s
  where s.last_seq - s.history_checked_seq >= 100 and ($1::int > 0 or s.keep_messages > 0)
  limit $2
  for update of s skip locked
),
bound as (
  select c.user_id, c.id, c.last_seq, c.keep > 0 and k.n >= c.keep as over,
         least(k.floor_seq, a.floor_seq) as below_seq,
         least(k.floor_exp, a.floor_exp) as expires_by,
         coalesce(x.through_seq, case when $4::boolean then 0 else 9223372036854775807 end) as through_seq
  from cand c
  cross join lateral (
    select count(*) as n, min(k0.seq) as floor_seq, min(k0.expires_at) as floor_exp from (
      select m.seq, m.expires_at from agentmem.messages m
      where m.user_id = c.user_id and m.session_id = c.id and m.expires_at > now()
      order by m.seq desc limit c.keep) k0) k
  cross join lateral (
    select min(a0.seq) as floor_seq, min(a0.expires_at) as floor_exp from (
      select m.seq, m.expires_at from agentmem.messages m
      where m.user_id = c.user_id and m.session_id = c.id and m.expires_at > now()
        and m.role <> 'tool' and not (m.role = 'assistant' and m.content = '')
      order by m.seq desc limit ` + strconv.Itoa(memory.MaxContextMessages) + `) a0) a
  left join agentmem.session_summaries x on x.user_id = c.user_id and x.session_id = c.id
),
eligible as (
  select m.user_id, m.session_id, m.seq from bound b
  cross join lateral (
    select m.user_id, m.session_id, m.seq from agentmem.messages m
    where b.over and m.user_id = b.user_id and m.session_id = b.id and m.seq < b.below_seq and m.seq <= b.through_seq
      and m.expires_at > now() and m.expires_at <= b.expires_by
      and not exists (select 1 from agentmem.messages_archive a
                      where a.user_id = m.user_id and a.session_id = m.session_id and a.id = m.id)
    order by m.seq
    limit $3) m
),
doomed as (
  select m.user_id, m.session_id, m.seq from agentmem.messages m
  where (m.user_id, m.session_id, m.seq) in (select user_id, session_id, seq from eligible)
  for update of m skip locked
),
moved as (
  delete from agentmem.messages m using doomed d
  where m.user_id = d.user_id and m.session_id = d.session_id and m.seq = d.seq
  returning m.*
),
archived as (
  insert into agentmem.messages_archive (session_id, seq, id, tenant_id, user_id, agent, role, content,
    parts, name, tool_calls, tool_call_id, metadata, token_estimate, created_at, expires_at, default_retention)
  select session_id, seq, id, tenant_id, user_id, agent, role, content,
    parts, name, tool_calls, tool_call_id, metadata, token_estimate, created_at, expires_at, default_retention
  from moved where not $5::boolean
  returning 1
),
checked as (
  update agentmem.sessions s set history_checked_seq = b.last_seq
  from bound b
  where s.user_id = b.user_id and s.id = b.id
    and (select count(*) from eligible e where e.session_id = b.id) < $3
    and (select count(*) from eligible e where e.session_id = b.id) = (select count(*) from doomed d where d.session_id = b.id)
  returning 1
)
select (select count(*) from cand), (select count(*) from checked),
       (select count(*) from moved), (select count(*) from archived)`

// capLeftSQL says whether a session is left for the cap to look at (capHistorySQL's cand).
const capLeftSQL = `select exists (select 1 from agentmem.sessions s
	where s.last_seq - s.history_checked_seq >= 100 and ($1::int > 0 or s.keep_messages > 0))`

// capSessionsPerBatch is how many sessions one statement of the cap looks at; each moves at
// most the sweep's batch size over this many messages, so a statement moves at most a batch.
const capSessionsPerBatch = 10

// capHistories applies the history cap until no session is left to look at or p.Deadline
// passes, adding what it did to res; more reports sessions left for the next sweep.
func (s *Store) capHistories(ctx context.Context, p SweepParams, res *memory.SweepResult) (more bool, err error) {
	perSession := max(1, p.BatchSize/capSessionsPerBatch)
	for {
		if time.Now().After(p.Deadline) {
			// More only when a session is left to look at.
			err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
				b.Queue(capLeftSQL, p.History.Keep).QueryRow(func(row pgx.Row) error { return row.Scan(&more) })
			})
			if err != nil {
				return false, fmt.Errorf("look for sessions to cap: %w", err)
			}
			return more, nil
		}
		var looked, checked, moved, archived int64
		err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
			b.Queue(capHistorySQL, p.History.Keep, capSessionsPerBatch, perSession, s.summarize, p.History.Delete).
				QueryRow(func(row pgx.Row) error {
					return row.Scan(&looked, &checked, &moved, &archived)
				})
		})
		if err != nil {
			return false, fmt.Errorf("cap histories: %w", err)
		}
		res.Batches++
		res.Capped.Sessions += checked
		res.Capped.Archived += archived
		res.Capped.Deleted += moved - archived
		if looked < capSessionsPerBatch && checked == looked {
			return false, nil
		}
		if moved == 0 && checked == 0 {
			// Every session or message it found is held by live requests: the next sweep
			// takes them.
			return true, nil
		}
	}
}
