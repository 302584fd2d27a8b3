-- The rate-limit counters are no client's to read or write. Nothing is granted to anon or
-- authenticated on agentmem.request_rates; this policy says the same to row-level security, so
-- that a grant added by mistake still shows no row and takes none. The limiter's function
-- (agentmem.take_request_slot, security definer) and service_role bypass row-level security.
create policy no_client_access on agentmem.request_rates
  as restrictive for all to anon, authenticated
  using (false)
  with check (false);
