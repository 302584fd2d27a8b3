-- A session's backfill is written once per adapter while it waits. A backfillSession intent
-- that finds a backfill of the same session still pending for an adapter answers with that job
-- instead of writing another (the job covers the messages up to the session's last seq when it
-- was written; later ones reach the adapter with their turns' own jobs): a burst of requests for
-- one session delivers its messages to each adapter once. The intents function finds those jobs
-- through this index, under a lock of the session's row that serialises the backfills of one
-- session (see store.CreateIntent). The index holds only the backfills that wait, so it stays
-- small.
create index jobs_pending_backfill_idx on agentmem.jobs (session_id)
  where intent = 'backfillSession' and status = 'pending';
