-- BM25's statistics count a question's words in the pending messages by testing each message for
-- each word, not by unfolding every message into its words.
--
-- agentmem.message_word_stats adds to the counted words (agentmem.message_words) those of the
-- scope's pending messages (agentmem.message_words_pending, not yet folded) and takes away those
-- of its expired messages not yet swept. For both it unfolded each message's tsvector into its
-- lexemes and kept the question's: 30 lexemes a message for a question of three. A user who is
-- chatting has up to the fold threshold (256) of messages pending, and every BM25 recall over
-- messages read them so: 2.6 to 4.3 ms for 204 pending messages of 30 words (a question of three
-- words, medians of 40, alternated twice), 0.45 ms of it reading the messages by their keys.
-- Each message is now tested for each of the question's words (@@ with the word's tsquery, made
-- once a question, as BM25's scoring makes it): 0.89 and 0.92 ms. The counts are the same: a
-- message's tsvector holds each lexeme once, and it matches a lexeme's tsquery when it holds it.
--
-- On a large table: nothing is rewritten; only the function changes.

create or replace function pg_temp.patch_function(fn regprocedure, old text, new text) returns void
language plpgsql
as $$
declare
  def text := pg_catalog.pg_get_functiondef(fn);
  found integer := (pg_catalog.length(def) - pg_catalog.length(pg_catalog.replace(def, old, ''))) / pg_catalog.length(old);
begin
  if found <> 1 then
    raise exception 'patch of %: the text to change is there % times, not once: %', fn, found, old;
  end if;
  execute pg_catalog.replace(def, old, new);
end
$$;

-- the question's words, each with its tsquery (a word asked twice counts once, as before)
select pg_temp.patch_function('agentmem.message_word_stats(text, text, text, text[])',
  $old$  with expired as ($old$,
  $new$  with asked as materialized (
    select distinct u.lexeme, pg_catalog.quote_literal(u.lexeme)::tsquery as q
    from pg_catalog.unnest(terms) u(lexeme)
  ),
  expired as ($new$);

select pg_temp.patch_function('agentmem.message_word_stats(text, text, text, text[])',
  '    select u.lexeme, pg_catalog.count(*), 0 from fresh f, pg_catalog.unnest(f.fts) u
    where u.lexeme = any (terms) group by u.lexeme',
  '    select t.lexeme, pg_catalog.count(*), 0 from fresh f, asked t
    where f.fts operator(pg_catalog.@@) t.q group by t.lexeme');

select pg_temp.patch_function('agentmem.message_word_stats(text, text, text, text[])',
  '    select u.lexeme, pg_catalog.count(*) as docs from expired e, pg_catalog.unnest(e.fts) u
    where u.lexeme = any (terms) group by u.lexeme',
  '    select t.lexeme, pg_catalog.count(*) as docs from expired e, asked t
    where e.fts operator(pg_catalog.@@) t.q group by t.lexeme');
