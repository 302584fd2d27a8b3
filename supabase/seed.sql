-- No seed data: tests and `make dev` create what they need through the functions themselves.
-- The Supabase CLI reads this file ([db.seed] in config.toml) after `supabase db reset`.
select 1;
