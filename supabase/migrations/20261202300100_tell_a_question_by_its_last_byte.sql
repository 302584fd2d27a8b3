-- A question is told by its last byte.
--
-- BM25 over messages credits a turn with the score of the question before it, and a turn is a
-- question when its text, trailing spaces trimmed, ends with '?'. That was
-- right(rtrim(content), 1) = '?', and both functions are character functions: rtrim lists the
-- length of every character of the text, and right counts them, for each match the list reads
-- (agentmem.message_word_matches) and each turn it reads beside them
-- (agentmem.message_bm25_scored). For the 101,000 messages of a user (168 bytes each on
-- average), 0.9 µs a message; for a question matching 1,429 of them, 1.3 ms of the list.
--
-- The same test on the text's bytes: trailing 0x20 bytes trimmed, the last byte 0x3F. The bytes
-- are the server's own: convert_to(content, 'SQL_ASCII') converts nothing (PostgreSQL converts
-- no text to SQL_ASCII) and copies them. In every encoding a server may have (UTF-8 and the
-- others; not the client-only SJIS, BIG5, GBK, UHC, GB18030) the bytes of a multibyte character
-- are all 0x80 or above, so the bytes trimmed are the spaces rtrim trims and the last byte is
-- '?' exactly when the last character is: the same turns are questions
-- (TestAQuestionIsToldByItsLastByte compares both tests on texts of every kind, as each
-- function reads them). 0.15 µs a message.
--
-- On a large table: nothing is rewritten; only the functions change.

create or replace function pg_temp.patch_function(fn regprocedure, old text, new text, times integer) returns void
language plpgsql
as $$
declare
  def text := pg_catalog.pg_get_functiondef(fn);
  found integer := (pg_catalog.length(def) - pg_catalog.length(pg_catalog.replace(def, old, ''))) / pg_catalog.length(old);
begin
  if found <> times then
    raise exception 'patch of %: the text to change is there % times, not %: %', fn, found, times, old;
  end if;
  execute pg_catalog.replace(def, old, new);
end
$$;

select pg_temp.patch_function('agentmem.message_word_matches(text, text, text, tsquery)',
  $old$pg_catalog.right(pg_catalog.rtrim(m.content), 1) = '?'$old$,
  $new$pg_catalog.rtrim(pg_catalog.convert_to(m.content, 'SQL_ASCII'), ' '::bytea) operator(pg_catalog.~~) '%?'::bytea$new$, 1);

select pg_temp.patch_function('agentmem.message_bm25_scored(text, text, text, jsonb, text, text, timestamp with time zone, timestamp with time zone, tsquery, tsquery, integer, tsquery[], tsquery[], double precision[], double precision, double precision, integer, double precision)',
  $old$pg_catalog.right(pg_catalog.rtrim(y.content), 1) = '?'$old$,
  $new$pg_catalog.rtrim(pg_catalog.convert_to(y.content, 'SQL_ASCII'), ' '::bytea) operator(pg_catalog.~~) '%?'::bytea$new$, 1);
