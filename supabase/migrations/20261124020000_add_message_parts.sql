-- A message's content may be an array of content parts (text, images, audio, files, as the
-- Chat Completions API takes them). content keeps the message's text (the string, or the text
-- parts joined by newlines), so full-text search, token estimates, the length limit and
-- embeddings read what they always read; parts keeps the array as committed, null when the
-- content was a string. Every existing row is a string message: parts null, valid as it is.
-- A nullable column without a default is added without rewriting the table.
alter table agentmem.messages add column parts jsonb;

-- Checked on every row written from now on. Not validated against the existing rows: they
-- all hold null, and validating would read the whole table under this migration's lock.
alter table agentmem.messages add constraint messages_parts_check
  check (parts is null or (jsonb_typeof(parts) = 'array'
    and jsonb_array_length(parts) between 1 and 100)) not valid;
