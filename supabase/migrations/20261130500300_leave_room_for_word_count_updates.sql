-- Room on the word counts' pages for their updates.
--
-- A count of a scope's word is updated each time messages holding the word are counted or
-- deleted. With full pages every update went to another page and added an entry to the primary
-- key; with half of each page free, most updates stay on their page (a heap-only update) and the
-- index is left alone: counting a batch of messages takes about half the time.
--
-- On a large table: nothing is rewritten; pages written from now on keep the room (a VACUUM FULL
-- in a quiet hour gives it to the existing ones).

alter table agentmem.message_words set (fillfactor = 50);
