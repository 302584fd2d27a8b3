export interface paths {
    "/v1/active-session": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Resolve, activate or start the current session of (user, agent).
         * @description Which session is current for (user, agent), shared by every device of the user.
         *
         *     - `mode: "resolve"` (default): answers the active session of the scope. When there is
         *       none (or it has expired), a new session is created and made active (201,
         *       `created: true`). Concurrent resolves of one scope with no active session create
         *       exactly one session: they serialise on a lock of the scope. `session_id`, when given,
         *       is only the client's remembered id: `matched` says whether it is the active one; it
         *       never changes which session is active. Resolving an existing session refreshes its
         *       `last_active_at` (as a commit does) and leaves its expiry.
         *     - `mode: "activate"`: makes `session_id` (required) the active session. It must be a
         *       session of the caller for this same agent, or an id no session uses yet, in which
         *       case a session with that id is created (201, `created: true`). The caller's own
         *       expired session comes back for another `DEFAULT_RETENTION`, as a commit to it would
         *       bring it back; its expired messages stay invisible. Another user's session and a
         *       session of the caller under another agent answer 404, indistinguishably. `matched`
         *       is always true.
         *     - `mode: "new"`: creates a fresh session with a new id and makes it active (always 201).
         *       `session_id` must not be given with this mode (400). `matched` is false.
         *
         *     A session created here expires after `DEFAULT_RETENTION`; commits extend its expiry.
         *     It takes `metadata` (a JSON object, at most 16 KiB) when given; a session that exists
         *     keeps its own (`sessions` `set_metadata` changes it). Activating an existing session
         *     refreshes its `last_active_at` too. The answer is 201 when a session was created and
         *     200 otherwise.
         */
        post: operations["activeSession"];
        delete?: never;
        /** CORS preflight. */
        options: operations["activeSessionPreflight"];
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/commit-turn": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Append one turn (one or more messages) to a session, with optional long-term memories.
         * @description Appends the messages of one turn to a session and stores long-term memories, all or
         *     nothing: any invalid part answers 400 and nothing is stored.
         *
         *     **Session.** The client chooses `session_id` (a UUID). The session is created on the
         *     first commit, owned by the caller and bound to the request's `agent`. Committing to a
         *     session of another user, or to a session of the caller that belongs to another agent,
         *     answers 404. A commit marks the session active in time (`last_active_at`) and extends
         *     its expiry to the later of its current expiry and now + TTL; it does not change which
         *     session `active-session` resolves.
         *
         *     **Order.** Each stored message gets `seq`, strictly increasing within the session in the
         *     order given (not necessarily contiguous). Concurrent commits to one session serialise on
         *     the session row: they never interleave inside a turn and never share a `seq`. Order never
         *     depends on clock readings.
         *
         *     **Message times (importing a history).** A service caller may give each message the time
         *     it was said, `messages[].created_at` (RFC 3339 with `Z` or an offset; stored and answered
         *     in UTC, to the microsecond), to import a conversation from another system. It must be
         *     from `2000-01-01T00:00:00Z` to at most 5 minutes after the commit's time (an allowance
         *     for the caller's clock); anything else answers 400 naming `messages[i].created_at` and
         *     stores nothing. A user token giving it answers 400 `invalid_request` naming the field:
         *     a user's client has no past to import and must not back-date what it says, yet the user
         *     may call this function, so it is a field this caller may not send (reported with any
         *     other invalid field of the turn), not a function its role may not call (403). A
         *     message without it (or with `null`) is created at the commit's time. The time only
         *     places the message: `seq` still follows the order given, so a later message may carry
         *     an earlier time; expiry (`expires_at`) and the session's `last_active_at` still count
         *     from the commit's time. The answer, a replay of its `Idempotency-Key`, `get-context`
         *     (`raw`) and `sessions` `history` give the stored time, and the `since` of `history` and
         *     `get-context` reads it; the user's history across sessions orders by it.
         *
         *     **Content parts.** `content` is a string, or an array of 1 to 100 content parts as the
         *     Chat Completions API takes them: each part an object with a string `type`. A `text`
         *     part carries its `text` (a string); any other part (`image_url`, `input_audio`, `file`,
         *     or a type of your own) is stored as given, at most 64 KiB of compact JSON each. The
         *     message's *text* is its string, or its text parts' texts joined by `\n` ("" when it has
         *     none): the 100,000-character limit, the token estimate and full-text search use the
         *     text. Every answer gives `content` back as it was committed (the same JSON value: the
         *     database keeps values, not the order of an object's keys or the spelling of numbers),
         *     except the `anthropic` format of `get-context`, which maps parts to content blocks.
         *     Parts without `type`, text parts without a string `text`, an empty array, more than 100
         *     parts or a part over 64 KiB answer 400 naming the part, e.g.
         *     `messages[2].content[1].text`. The empty-content rule applies to string content only:
         *     an array always holds a part (an image alone is a valid user message).
         *
         *     **Client message ids.** A message may carry `id`, chosen by the client: 1 to 255
         *     printable characters, such as a UUID or the ids of LangGraph (`run-3f2a...`) and
         *     LangChain (`lc_run--...`); a UUID names the same message in either case. Ids are
         *     unique per session, not globally. A message whose id the session already holds is not
         *     stored again (nor updated): the answer gives its original `id`, `seq` and `created_at`.
         *     The same id twice in one request answers 400.
         *
         *     **Memories.** `memories` are long-term facts of the user under the request's agent,
         *     recalled later by `recall` and `get-context`. One fact is one row per (tenant, user,
         *     agent): two texts are the same fact when they are equal after lower-casing, folding runs
         *     of white space into one space, trimming, and dropping trailing `.`, `!`, `?`, `;` and `,`.
         *     Storing a fact again keeps its row and id, replaces its content with the new spelling,
         *     re-embeds it, merges metadata (top-level keys of the new metadata replace those of the
         *     stored one, other stored keys stay: Postgres `jsonb ||`), and extends its expiry to the
         *     later of the two. A fact stored again after it expired starts afresh: a new id, a fresh
         *     `created_at`, and only the new metadata. Within one request, when several memories are
         *     the same fact the last one's content is stored, their metadata merge in order, and all
         *     of them answer the same id.
         *
         *     **Near-duplicates.** A new fact whose vector has a cosine similarity of at least
         *     `MEMORY_MERGE_SIMILARITY` (default 0.95; above 1 turns this off) to an unexpired memory
         *     of the same user, tenant and agent, by the same embedding model and dimension, and whose
         *     text says much the same words in much the same order (at least half of the two texts'
         *     distinct adjacent word pairs are shared), is merged into that memory as if it were the
         *     same fact: the memory keeps its id and `created_at` and takes the new text. The word
         *     order check keeps "Alice owes Bob" and "Bob owes Alice" apart, which a bag-of-words
         *     embedder cannot. Facts stored without a vector merge only when they are the same fact.
         *     Concurrent turns of one user and agent store their facts one after the other, so
         *     near-duplicates committed at once still end in one memory.
         *
         *     **Embedding outages.** When the embedding provider is unavailable (or too slow for
         *     half of the request's time), the turn is stored all the same: its memories are stored
         *     without a vector, found by full-text search meanwhile, and embedded later by the
         *     scheduled run of `sweep-expired` (or `agentmem embed-pending`). Storing an unchanged
         *     fact again keeps the vector it has. The answer does not differ.
         *
         *     **Expiry.** Every message and memory written gets `expires_at` = now + `ttl_seconds`, or
         *     now + `DEFAULT_RETENTION` (720 h unless configured) without it; now is the commit's
         *     time, also for a message given an earlier `created_at`.
         *
         *     **Idempotency.** With an `Idempotency-Key` header, the first successful (201) answer is
         *     recorded for 24 hours. Keys are scoped by the caller's role (`authenticated` or
         *     `service_role`), tenant, user (the caller, or the `user_id` a service names), function and
         *     key: another user's request with the same key, or the user's own request with a key a
         *     service used for them, is a new request. Within that scope:
         *     - the same key with the same body returns the recorded answer (201, same body) with
         *       header `Idempotent-Replayed: true`, and stores nothing;
         *     - the same key with a different body answers 409 `conflict`. "The same body" means the
         *       same JSON text once insignificant white space is removed; key order and number
         *       spelling count;
         *     - a request whose key is held by an identical request still in flight waits for that
         *       request to finish and then replays its answer (or, if it failed, runs itself). Two
         *       identical requests racing therefore store exactly one copy and both answer 201;
         *     - a request that failed records nothing, so its retry runs again;
         *     - after 24 hours the key is free again.
         *     Without a key, a retry is a new request (client message ids still prevent duplicate
         *     messages).
         */
        post: operations["commitTurn"];
        delete?: never;
        /** CORS preflight. */
        options: operations["commitTurnPreflight"];
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/get-context": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Everything an agent needs for its next prompt, in one call.
         * @description Reads, in one read-only transaction:
         *
         *     - `messages`: the window of the session. Up to `max_messages` most recent unexpired
         *       messages of the session (for this agent) are read and returned oldest first, shaped so
         *       that an LLM API accepts them. Messages are kept or dropped in units: an assistant
         *       message with `tool_calls` together with the `tool` messages that immediately follow it
         *       and answer its calls (by `tool_call_id`), or any other single message. A unit that is
         *       incomplete within what was read is dropped: a `tool` message whose calling assistant
         *       message is not right before it (outside the window, or separated by another message),
         *       and an assistant `tool_calls` message missing any of its results. Then, when
         *       `max_tokens` is given, the oldest units are dropped until the token estimate of the
         *       rest is at most `max_tokens` (so a single newest unit larger than the budget leaves the
         *       window empty).
         *     - The token estimate of a message is computed when it is committed: the UTF-8 bytes of
         *       its content, name, tool_call_id and, per tool call, id + type + function name +
         *       arguments + 12, divided by 4 and rounded up, plus 4 for the message framing. It is a
         *       cheap, stable estimate for budgeting, not a tokenizer count.
         *     - `memories`: when `query` is non-empty and `recall_k` > 0, the top `recall_k` long-term
         *       memories of the user for this agent (this agent's and agent-less ones) ranked exactly as
         *       `recall` in `hybrid` mode, without filter and with `min_score` 0, the tenant's shared
         *       memories among them (marked `shared: true`) unless `include_shared` is false.
         *       Otherwise `[]`.
         *     - `user_memory`: the user's key/value memory as an object (keys to JSON objects), `{}`
         *       when empty. `state`: the user's mode string, or null. `notes`: the agent's long-term
         *       Markdown notes for this user, or null. `user_memory` and `state` belong to the user
         *       (every agent); `notes` to (user, agent).
         *     - `since` (RFC 3339): only messages created at or after it are read. `answers_only`:
         *       tool messages and assistant messages with no text are not read (they take no place
         *       among the `max_messages`), and the assistant messages read lose their `tool_calls`
         *       (and are re-estimated without them); system, user and assistant text is what remains.
         *     - `summary`: the session's rolling summary, `{content, through_seq, updated_at}`, or
         *       null. With a summary, `messages` holds only messages after its `through_seq` (the
         *       summary tells of the others), and always every one of them the window's limits allow,
         *       however far the summary lags behind: never a gap.
         *
         *     **Formats.** `format` shapes `messages` (nothing else of the answer changes, except
         *     `system` and `usage` in `anthropic`):
         *
         *     - `raw` (default): stored messages with every field; `content` as committed (a string or
         *       content parts). Only `raw` carries each message's `created_at` (the time a service
         *       gave it on import, else its commit's): the `openai`, `langchain` and `anthropic`
         *       message objects have no field for it and are kept exactly as their APIs take them.
         *     - `openai`: Chat Completions message objects; `content` as committed, null on an
         *       assistant message with tool calls and no content.
         *     - `langchain`: LangChain stored messages, as `mapChatMessagesToStoredMessages`
         *       (LangChain.js) and `messages_to_dict` (Python) write them and
         *       `mapStoredMessagesToChatMessages` / `messages_from_dict` read them: `{type: human | ai
         *       | system | tool, data: {content, additional_kwargs, response_metadata, type, name,
         *       id, tool_calls, invalid_tool_calls, tool_call_id}}`. `content` is as committed;
         *       `response_metadata` is the message's `metadata`; `id` the message id; `name` the
         *       message's name, null when it has none. An `ai` message has `tool_calls` (`{name, args, id, type:
         *       tool_call}`, `args` the arguments' JSON object, `{}` for empty arguments) and
         *       `invalid_tool_calls` (the calls whose arguments are not a JSON object, as LangChain's
         *       parser keeps them), and, when it has calls, the calls as the Chat Completions API
         *       shapes them in `additional_kwargs.tool_calls` (as LangChain's ChatOpenAI writes them).
         *       A `tool` message has `tool_call_id`.
         *     - `anthropic`: the Messages API's `messages`, and `system`: the text of the window's
         *       system messages joined by a blank line, or null (leave it out of the request then).
         *       Roles are `user` and `assistant`; assistant tool calls are `tool_use` blocks (`input`
         *       the arguments' JSON object; arguments that are not one come as `{"arguments":
         *       "<as given>"}`); each tool message is a `tool_result` block of the `user` message
         *       right after the call, results first; consecutive messages of one role merge into one
         *       (their blocks in order); a message that merged with none and had string content keeps
         *       a string. Content parts map to blocks: `text` to `text` (blank text is left out, the
         *       API refuses it), `image_url` to `image` (an http(s) URL as a `url` source; a `data:`
         *       URL of a JPEG, PNG, GIF or WebP image as `base64`), `file` with a PDF `data:` URL to a
         *       `document`. Other parts (`input_audio`, files by id, `refusal`, your own types) have no
         *       Messages API form: they are left out and counted in `usage.dropped_parts`. Tool ids
         *       the API refuses (characters other than `A-Z a-z 0-9 _ -`) are replaced, in the call
         *       and its result alike, by the id's allowed characters and a digest of it. The first
         *       message must be a user message: the assistant messages before the first user message
         *       of the window, with their tool results, are left out, and so is a message left with
         *       no content; both are counted in `usage.dropped_messages`. `usage.messages` and
         *       `usage.token_estimate` then count the stored messages carried (in `system` or
         *       `messages`), so `usage.messages` can exceed the length of `messages`.
         *
         *     Every format keeps the tool-call rule of the window: never a call without its results,
         *     nor a result without its call.
         *
         *     A session that does not exist, has expired, belongs to another agent or belongs to
         *     someone else gives empty `messages`, indistinguishably: this function never answers 404.
         */
        post: operations["getContext"];
        delete?: never;
        /** CORS preflight. */
        options: operations["getContextPreflight"];
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/recall": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Rank the user's long-term memories, past messages, or both, against a query.
         * @description Searches only this user's unexpired long-term memories (in the caller's tenant) and,
         *     unless `include_shared` is false, the shared memories of that tenant (see `memories`),
         *     marked `shared: true`. With `agent`, only that agent's memories and agent-less ones;
         *     without `agent`, the memories of every agent of the user.
         *
         *     **Source.** `source` chooses what is searched: `memories` (the default, as above),
         *     `messages` (the user's unexpired messages of every session, only that agent's sessions
         *     when `agent` is given: past conversations), or `all` (both, as one ranking: each side,
         *     full text and vector, ranks the memories and messages together, and `hybrid` fuses the
         *     two ranks as below). Every result names its `source` (`memory` or `message`); a message
         *     also carries `session_id`, `seq` and `role`, its `content` is its text and its
         *     `metadata` is `{}` when it was committed without (as in get-context). The modes, `filter` (on a message's
         *     own metadata), `min_score`, `k` and `mmr_lambda` apply to messages as to memories. A
         *     message's text is embedded when it is committed, except tool messages (a tool's output)
         *     and messages without text: those are found by full text only. A message longer than
         *     20,000 characters is embedded by its first 20,000; full text covers all of it.
         *
         *     **Ranking.** Results are best first; ties are broken by source (`memory` first), then
         *     memory id, or session id and seq.
         *     - `text`: full-text search in the Postgres `english` configuration. The query is turned
         *       into an OR of its words' lexemes (stop words dropped), so a memory matches when it
         *       shares any word with the query; only matching memories are returned. `score` is
         *       BM25 (k1 1.2, b 0.75) with the statistics of the caller's own scope (their unexpired
         *       rows of the tenant, with the tenant's shared memories when they are searched, and of
         *       `agent` when given: how many there are, their average length in lexemes, and how many
         *       hold each word), so a word most of them hold weighs little and another user's rows
         *       never change a ranking. A message's speaker (`name`)
         *       is searchable and a word of it counts three times. Over messages, a matching message
         *       also gets half the score of the matching question just before it (its answer ranks
         *       beside it) and, when neither is a question, half the score of the matching reply
         *       just after it (what the reply repeats ranks above the reply): `RECALL_FOLLOW_WEIGHT`.
         *       Higher is better, not normalised: compare scores within one answer, or threshold
         *       `relevance`. A query made only of stop words or punctuation matches nothing.
         *     - `vector`: cosine similarity between the embeddings of the query and of each memory.
         *       `score` = 1 − cosine distance, from −1 to 1, higher is better.
         *     - `hybrid` (default): reciprocal rank fusion of the two ranked lists above, each taking
         *       up to max(2·k, 20) candidates: `score` = Σ 1 / (50 + rank) over the lists in which the
         *       memory appears (ranks start at 1, both lists weigh 1) + 0.01 × `relevance`, which
         *       orders the near ties of fusion by how much of the query each result holds; so at most
         *       2/51 + 0.01 ≈ 0.0492. Its
         *       value only orders results; it is not a similarity, and the best result of a query
         *       about nothing stored scores as high as any: threshold `relevance` (or read
         *       `matched`) to know whether anything matched well.
         *
         *     **Embedding model.** Only memories (and messages) embedded by the configured model
         *     (`EMBEDDING_MODEL`) take part in the vector ranking; one stored while the embedding
         *     provider was down, or embedded by an earlier model, is found by text until it is
         *     embedded again (by the scheduled embed-pending run or `agentmem backfill`). When the
         *     provider is unavailable, `hybrid` (and `get-context`'s recall) ranks by text alone, with
         *     the same score formula, and `vector` answers 503 `unavailable` with `Retry-After`.
         *
         *     **Filter.** `filter` keeps memories whose metadata has every top-level key of the filter
         *     with exactly the same JSON value (JSON equality: nested objects and arrays must be equal
         *     as a whole, not merely contain the filter's; `1` and `1.0` are equal). `{}` filters
         *     nothing.
         *
         *     **min_score.** Results scoring below `min_score` are dropped (default 0). In `vector`
         *     mode this default drops memories with negative similarity; pass e.g. −1 to keep them.
         *     A score's scale depends on the mode (BM25 is unbounded, fusion's at most 0.049), so
         *     `min_score` suits one mode; `min_relevance` drops by `relevance`, the same scale in
         *     every mode.
         *
         *     **Knowing when nothing matched.** `matched` is true when the best result's `relevance`
         *     reaches `RECALL_MATCH_RELEVANCE` (default 0.05). A vector's similarity counts in
         *     `relevance` only above its model's baseline, the similarity unrelated texts reach
         *     (`RECALL_VECTOR_BASELINE`; 0.21 for the built-in embedder, else 0), so a question
         *     about nothing stored ("What is the capital of Mongolia?") gets its nearest texts with
         *     relevance near 0 and `matched` false.
         *
         *     **Ranking.** Hybrid fusion weighs each side's rank as `weight / (k + rank)`: the
         *     weights (`RECALL_TEXT_WEIGHT`, `RECALL_VECTOR_WEIGHT`, default 1) and `k`
         *     (`RECALL_RRF_K`, default 50) are the deployment's settings. Only vectors of the
         *     configured embedding model and dimension rank. A user with fewer memories than
         *     `RECALL_EXACT_LIMIT` (default 2,000) is ranked exactly; a larger one through the model's
         *     HNSW index, whose scan goes on until `k` memories pass the filters. Messages follow the
         *     same rule by the user's number of messages, through the HNSW index on messages.
         *
         *     **mmr_lambda.** Diversifies the answer (maximal marginal relevance), see the field.
         *
         *     **Mem0.** With the Mem0 adapter and `MEM0_RECALL=true`, recall also searches Mem0's
         *     memories of the caller (of the tenant, and of `agent` when given), with the query's
         *     personal data redacted, while it searches the database, waiting at most
         *     `MEM0_RECALL_TIMEOUT`. Mem0's results are merged in alternately with the database's,
         *     the database's first, leaving out one whose text a result already has, `k` in all; each
         *     has `source` `memory` and `origin` `mem0`. Mem0 failing or slow leaves the database's
         *     results alone (never an error). `source` `messages`, or a `filter`, does not ask Mem0;
         *     `min_score` applies to the database's results only.
         */
        post: operations["recall"];
        delete?: never;
        /** CORS preflight. */
        options: operations["recallPreflight"];
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sweep-expired": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Delete expired rows of every user (service callers only).
         * @description Service callers only: a user token answers 403 (before the body is read). It acts on
         *     every user, so it takes no `user_id` or `tenant_id` (400 as unknown fields).
         *
         *     Deletes, in this order, expired messages, expired archived messages, expired memories,
         *     expired sessions left with no messages (live or archived), idempotency records past
         *     their 24-hour window, and rate-limit counters whose bucket is full again
         *     (`request_rates`; deleting one changes no limit). Then it applies the history cap
         *     (`HISTORY_KEEP_MESSAGES`, a session's `keep_messages`): of each session with 100 or
         *     more messages since it last looked, it archives (or deletes) the messages past the cap
         *     that no `get-context` window reads and the rolling summary covers, a few sessions and
         *     at most `batch_size` messages per short transaction, skipping what a request holds;
         *     `capped` counts it. A dry run caps nothing.
         *
         *     Before deleting, the sweep re-stamps the rows whose expiry came from an earlier
         *     `DEFAULT_RETENTION` than the deployment's (see Retention); `restamped` counts them. A
         *     dry run re-stamps nothing. Each batch
         *     deletes at most `batch_size` rows of one kind in its own short transaction and skips
         *     rows that a live request holds locked (a rate counter, locked for microseconds, is
         *     waited for), so the sweep never makes a commit or a read wait. It goes on
         *     until nothing expired remains or the time budget is spent. The budget is
         *     `max_duration_ms`, bounded by the request's deadline: the Lambda deadline (or the 25 s
         *     request timeout, whichever is sooner) minus a headroom of 1 s (or a tenth of the time
         *     left, when less) to answer. A batch already started is finished; no batch starts after
         *     the budget. `more: true` means the budget ran out first and expired rows may remain:
         *     call again.
         *
         *     With `dry_run: true` nothing is deleted: `deleted` counts what a complete sweep would
         *     delete now (sessions counted as those whose messages have all expired), `batches` is 0
         *     and `more` is false.
         *
         *     **Scheduled trigger.** The deployed function also runs on an EventBridge schedule
         *     (`rate(15 minutes)`), invoked directly by AWS with the standard scheduled-event envelope
         *     (`"source": "aws.events"`, `"detail-type": "Scheduled Event"`), not over HTTP. It sweeps
         *     with the defaults (`dry_run` false, `batch_size` 5000, `max_duration_ms` 20000) bounded by
         *     the Lambda deadline. It then embeds, within another 20 s and the deadline, up to 2000
         *     memories and knowledge chunks that wait for a vector of the configured model (stored
         *     during an embedding outage, or embedded by an earlier model). The invocation's result is
         *     a `SweepResult` with one more member, `embedded`: `{memories, knowledge_chunks, failed,
         *     more}` (`failed`: rows the provider refused, left waiting; `more`: rows may remain,
         *     because time ran out or the provider is still unavailable). No HTTP client can pass a
         *     request off as a scheduled event.
         */
        post: operations["sweepExpired"];
        delete?: never;
        /** CORS preflight. */
        options: operations["sweepExpiredPreflight"];
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/user-memory": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The user's key/value memory, shared by every agent of the user.
         * @description Keys naming JSON objects, one set per (tenant, user). It belongs to the user, not to an
         *     agent: every agent of the user sees the same keys, and the request has no `agent` field
         *     (giving one answers 400). `get-context` returns all of it as `user_memory`. Keys do not
         *     expire: a key stays until it is deleted, cleared or the user is erased (`forget-user`).
         *
         *     One operation per request, named by `op`:
         *
         *     - `set {key, value}`: stores `value` under `key`, replacing any value it had. 201 with
         *       `created: true` when the key was not set, 200 with `created: false` when a value was
         *       replaced (also by the same value; `updated_at` moves). Concurrent sets of one key
         *       never fail; the last one wins.
         *     - `get {key}`: 200 `{key, value, updated_at}`; 404 when the key is not set.
         *     - `list`: 200 `{items}`, every key with its value and `updated_at`, ordered by key
         *       bytewise (that is, by Unicode code point), `[]` when there is none. Not paginated:
         *       the keys of a user are expected to be few.
         *     - `delete {key}`: 200 `{deleted: 1}`; 404 when the key is not set.
         *     - `clear`: deletes every key of the user. 200 `{deleted: n}`, the number of keys
         *       removed (0 when there were none: never 404).
         *
         *     `key` is refused (400) on `list` and `clear`, `value` on every operation but `set`.
         *
         *     **Keys** are 1 to 128 characters (code points), not only white space, without white
         *     space at either end (two keys that look alike would otherwise differ), and without
         *     control characters (Unicode category Cc, line breaks and tabs included) or the line
         *     and paragraph separators U+2028 and U+2029. Keys are compared exactly: case, Unicode
         *     normalisation and inner spacing all count (`Lang` and `lang` are two keys).
         *
         *     **Values** are JSON objects (`{}` included; an array, a string, a number or `null` is
         *     400) of at most 64 KiB: 65,536 bytes once compacted, that is, measured on the value's
         *     JSON text as sent with insignificant white space removed (string escapes and number
         *     spellings are not rewritten, so `"\u00e9"` counts 8 bytes and `"é"` 4). Values are
         *     stored as Postgres `jsonb`: what comes back is the same JSON value, not the same text.
         *     Object keys come back in `jsonb`'s order rather than as sent, a key repeated within one
         *     object keeps its last value, and numbers keep their precision (`1.50` stays `1.50`,
         *     `1e2` comes back as `100`). JSON that `jsonb` cannot hold (an unpaired UTF-16
         *     surrogate escape such as `"\ud800"`, a number beyond the range of Postgres `numeric`,
         *     nesting too deep) answers 400 naming `value`, and nothing is stored.
         */
        post: operations["userMemory"];
        delete?: never;
        /** CORS preflight. */
        options: operations["userMemoryPreflight"];
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/user-state": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The user's mode string (e.g. active, halted), shared by every agent of the user.
         * @description One mode string per (tenant, user), such as `active` or `halted`. It belongs to the
         *     user, not to an agent: the request has no `agent` field (giving one answers 400).
         *     `get-context` returns it as `state` (null when the user has none). Its meaning is the
         *     application's: agentmem stores it and enforces nothing (a `halted` user's sessions can
         *     still be written to). It does not expire.
         *
         *     - `set {mode}`: 201 `{mode, updated_at, created: true}` when the user had no mode, 200
         *       with `created: false` when it replaces one (also by the same mode; `updated_at`
         *       moves). Concurrent sets never fail; the last one wins.
         *     - `get`: 200 `{mode, updated_at}`; 404 when the user has no mode.
         *     - `delete`: 200 `{deleted: true}`; 404 when the user has no mode.
         *
         *     `mode` is refused (400) on `get` and `delete`.
         *
         *     **Mode**: 1 to 64 characters (code points), not only white space, without white space
         *     at either end, without control characters (Unicode category Cc) or the line and
         *     paragraph separators U+2028 and U+2029. It is stored as given and compared
         *     case-sensitively (`Halted` is not `halted`); there is no list of allowed modes.
         */
        post: operations["userState"];
        delete?: never;
        /** CORS preflight. */
        options: operations["userStatePreflight"];
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/notes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The agent's long-term Markdown notes about the user; read, write and edit by section.
         * @description One Markdown text per (tenant, user, agent), written by the agent for itself
         *     (`agent` defaults to `"default"`). `get-context` returns the notes of its agent as
         *     `notes` (null when that agent has none). Notes do not expire: they stay until cleared
         *     or the user is erased (`forget-user`).
         *
         *     **Operations**, named by `op`:
         *
         *     - `read`: 200 `NotesDocument`. Notes never written (or cleared) read as `content: ""`
         *       and `updated_at: null`, never 404, so an agent can always read before it writes.
         *     - `overwrite {content}`: replaces the whole text; `content` may be `""` (empty notes,
         *       which still exist; `clear` removes them).
         *     - `append {content}`: adds `content` at the end. When the text does not end with a line
         *       break, one is put between the two, so `content` starts on a line of its own; no blank
         *       line is added. `content` must not be empty.
         *     - `prepend {content}`: adds `content` at the start. When `content` does not end with a
         *       line break, one is put after it, so the old text starts on a line of its own.
         *       `content` must not be empty.
         *     - `replace_section {section, content}`: replaces one section (rules below), or adds it
         *       at the end when there is no such section.
         *     - `delete_section {section}`: removes one section, subsections included; 404 when there
         *       is no such section, and nothing changes.
         *     - `clear`: deletes the notes. 200 `{agent, deleted}`, `deleted` false when there were
         *       none (never 404).
         *
         *     Every edit (`overwrite`, `append`, `prepend`, `replace_section`, `delete_section`)
         *     answers the notes after the edit, as `read` does; 201 when the agent had no notes for
         *     the user before the edit (never written, or cleared), 200 otherwise. `replace_section`
         *     also answers `section_created`. `content` is refused (400) on `read`, `delete_section`
         *     and `clear`, `section` on every operation but `replace_section` and `delete_section`.
         *     Edits of the same notes are applied one after the other (each reads, changes and
         *     writes back under a row lock): concurrent edits never lose one another.
         *
         *     **Sections.** A section is an ATX heading (`#` to `######` at the start of a line, up to
         *     three spaces of indent, then a space, a tab or the end of the line) and everything after
         *     it up to the next heading of the same or a higher level (fewer `#`), or the end of the
         *     text: a section holds its subsections. Lines inside fenced code blocks (fences of three
         *     or more backticks or tildes) are never headings; setext headings (text underlined with
         *     `===` or `---`) are not sections.
         *
         *     - `section` names a section either by its whole heading line (`"## Preferences"`: level
         *       and text must both match) or by its text alone (`"Preferences"`: any level). Both are
         *       compared exactly, case-sensitively, after trimming white space around the name and
         *       the heading, and an optional closing run of `#` (`## Goals ##` has text `Goals`).
         *       When several headings match, the first in the text is used.
         *     - `replace_section` keeps the heading line and replaces the section's body (its
         *       subsections included) with `content`, unless `content` starts with a heading of the same or a higher level than
         *       the section's: that heading then replaces the old one too (a way to rename a section).
         *       `content` starting with a deeper heading is body, a new subsection. `content` is
         *       stored ending with a line break (one is added when missing, unless `content` is
         *       `""`). Blank lines between the section's body and the next heading are kept.
         *     - `replace_section` of a section that does not exist appends one at the end of the
         *       text, after a blank line: under `content`'s own heading when `content` starts with
         *       one, else under `section` when it is a heading line, else under `## <section>`.
         *       `section_created` is then true. An agent can thus keep "the Preferences section" up
         *       to date without first checking whether it exists.
         *     - `delete_section` removes the heading, its body, its subsections and the blank lines
         *       before the next heading.
         *     - Every character outside the section edited stays exactly as it was.
         *
         *     **Size limit.** Notes are at most `max_chars` characters (code points), the
         *     configured `NOTES_MAX_CHARS` (1 to 1,000,000; default 20,000), given in every answer
         *     with `chars`, the current size. An edit whose result would be longer answers 400
         *     `invalid_request` with field `content`, saying the size it would reach and the limit,
         *     and changes nothing. `delete_section` is never refused for size, so notes over a
         *     lowered limit can always shrink (any other edit of them must bring them under it).
         */
        post: operations["notes"];
        delete?: never;
        /** CORS preflight. */
        options: operations["notesPreflight"];
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sessions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * List the user's sessions, page through one's messages or the user's across sessions, reset, delete, delete a message, set a title or the metadata, clear every message.
         * @description One operation per request, named by `op`. A field that is not one of the operation's
         *     is 400, like any unknown field. For every operation that names a `session_id`, a session
         *     that does not exist, has expired, is another user's or tenant's, or (when `agent` is
         *     given) is another agent's answers 404 `not_found`, indistinguishably. Without `agent`,
         *     the session may be of any agent of the user.
         *
         *     - `list {agent?, limit?, cursor?, offset?}`: the user's unexpired sessions, most recent activity
         *       first (`last_active_at` descending, then `session_id` descending). With `agent`, that
         *       agent's sessions only; without it, every agent's. `limit` 1 to 100, default 20.
         *       `message_count` counts the session's unexpired live messages (not those the history
         *       cap archived); each session also carries `created_at`, `metadata` and
         *       `last_synced_at`. Answer `{sessions, next_cursor}`.
         *     - `history {session_id, order?, limit?, cursor?, offset?, since?}`: the session's unexpired
         *       messages in the `raw` format of `get-context` (`content` as committed: a string or
         *       content parts). `order` `newest` (default; newest first, for display) or `oldest`
         *       (oldest first, for replay). `limit` 1 to 200, default 50. Pages follow `seq`, so
         *       messages committed between pages are never skipped nor repeated: `newest` pages
         *       continue below the last seq seen (messages arriving later are on a fresh first page),
         *       `oldest` pages continue above it and reach the new ones. `total` counts the messages
         *       the history pages through (the session's unexpired ones, created since `since` when
         *       given) when the page was read. With `include_archived: true` (either form), the
         *       messages the history cap archived are paged and counted too, in their place by `seq`
         *       (or creation). Answer
         *       `{messages, next_cursor, total}`.
         *     - `history {agent?, order?, limit?, cursor?, since?}` without `session_id` (absent or
         *       `null`): the user's history across sessions, the unexpired messages of every session
         *       of the user (of `agent`'s sessions when given), each as above plus its `session_id`.
         *       Ordered by creation (`created_at`), then `session_id`, then `seq` (the messages of one
         *       turn share their `created_at` and keep their order, unless a service gave them their
         *       times on import, which then place them); `order`, `limit`, cursors and
         *       `total` as above. Pages continue from the last message seen, so `newest` pages never
         *       repeat nor skip what existed when paging began and `oldest` pages reach new
         *       messages; a turn committed concurrently with a page may take a `created_at` just
         *       before that page's last message, since `created_at` is when its transaction began.
         *       An index (`messages_owner_created_idx`) serves every page at the cost of the first,
         *       however deep, and the `total`.
         *     - `since` (either form): an RFC 3339 timestamp with a time zone
         *       (`2026-11-20T09:00:00Z`, `2026-11-20T10:00:00.5+01:00`); only messages created at or
         *       after it are paged and counted. A malformed value is 400 naming `since`; `null` is
         *       no bound. Fractions below a microsecond round up.
         *     - `reset {session_id}`: deletes every message of the session and keeps the session, its
         *       title and its seq counter (the next message goes on numbering after the deleted
         *       ones). It waits for a commit in progress on the session, so whole turns go. Answer
         *       `{deleted: n}`, the number of unexpired messages deleted (archived ones included).
         *     - `delete {session_id}`: deletes the session, its messages and the active-session
         *       pointer to it. Answer `{deleted: true}`. A later `commit-turn` with the same id starts
         *       a new session, and `active-session` resolves to a new one.
         *     - `delete_message {session_id?, message_id}`: deletes one unexpired message of the
         *       session, live or archived (404 when the session or the message is not there). Answer
         *       `{deleted: true}`.
         *       Without `session_id` (absent or `null`), `message_id` names the caller's message of
         *       that `id` in whichever of their sessions (of `agent`'s, when given) holds it: another
         *       user's or tenant's is 404 as a missing one. A message `id` is the client's, or a
         *       random UUID the server gave; a client's id is unique within its session only, so
         *       when several of the caller's sessions hold it the answer is 409 `conflict`, naming
         *       no session and deleting nothing: give `session_id` then.
         *       A tool result whose call was deleted (or the reverse) is left out of `get-context`'s
         *       window, as any incomplete unit is.
         *     - `set_title {session_id, title}`: `title` is 1 to 200 characters (code points), not
         *       only white space, without control characters (U+0000 to U+001F, U+007F); `null`
         *       clears it. The field is required: an absent `title` is 400, not a clear. Answer
         *       `{session_id, title}`.
         *     - `set_metadata {session_id, metadata}`: replaces the session's metadata with
         *       `metadata`, a JSON object of at most 16 KiB (`{}` clears it); anything else is 400 and
         *       changes nothing. Answer `{session_id, metadata}`.
         *     - `clear {agent?}`: deletes every message of the user (of `agent`'s sessions when
         *       given) and keeps everything else: the sessions (with their titles, expiry and seq
         *       counters, so a later turn numbers on after the deleted messages), the active
         *       sessions, memories, key/value memory, state and notes. Idempotency records stay too:
         *       a retry of a `commit-turn` made before the clear answers as it did and does not
         *       store the turn again. One statement: a turn committed concurrently is deleted whole
         *       or kept whole. Answer `{deleted: n}`, the number of unexpired messages deleted (archived
         *       ones included).
         *
         *     `reset`, `delete_message`, `set_title` and `set_metadata` do not change
         *     `last_active_at` or the session's expiry, so they do not move the session in `list`.
         *
         *     **Cursors.** `next_cursor` is an opaque string, `null` on the last page (for `history`:
         *     when no further message existed when the page was read). Pass it back unchanged as
         *     `cursor` with the same operation and the same other fields (for `history`, the same
         *     `session_id` or none, `agent`, `order` and `since`); a string that is not a cursor of
         *     this listing (a cursor of `memories`, of the other `order`, of a session's history
         *     used for the user's or the reverse, or anything made up) is 400 naming `cursor`.
         *     Absent or `null` reads the first page. Pages are keyset pages, not a snapshot: in `list`, a
         *     session that becomes active while the client pages moves to the front and may be
         *     missed by a listing already past it.
         *
         *     **Offsets.** `offset` (0 to 10,000, default 0) skips that many items of `list` or
         *     `history` (in its order, after its filters) instead of a cursor: with `cursor` it is
         *     400, as is a value out of range. The page's `next_cursor` continues after it. Skipped
         *     items are read, so a deep offset is slower than a cursor, which costs the same at any
         *     depth; and items committed or deleted between pages shift an offset's pages.
         */
        post: operations["sessions"];
        delete?: never;
        /** CORS preflight. */
        options: operations["sessionsPreflight"];
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/mcp": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * An MCP server (Streamable HTTP, stateless) whose tools act as the token's user.
         * @description The Model Context Protocol's Streamable HTTP transport, stateless: no `Mcp-Session-Id`
         *     is issued or read, so any container answers any request, and a client sends
         *     `initialize`, `tools/list` and `tools/call` as JSON-RPC 2.0 messages in POST bodies
         *     (`Content-Type: application/json`, `Accept: application/json, text/event-stream`);
         *     every answer is one JSON document. The bearer token is checked before the body is read,
         *     as for every function; a 401 carries `WWW-Authenticate: Bearer realm="agentmem",
         *     resource_metadata="<url>"`, the protected resource metadata (RFC 9728) that MCP's
         *     authorization spec asks for. A GET of the endpoint (a standalone event stream) is 405.
         *
         *     Tools: `store_memory`, `recall_memory`, `search_knowledge_base`, `get_user_context`,
         *     `manage_long_term_memory` (operations `read`, `overwrite`, `append`, `prepend`,
         *     `delete_section_by_header`, `replace_section_by_header`, `delete_all_notes`),
         *     `get_context`, `commit_turn`, `forget_memory`, `list_memories`, `search_history`.
         *     `tools/list` gives each one's input and output JSON Schema, description and annotations
         *     (`readOnlyHint`, `destructiveHint`, `idempotentHint`). Each runs the use case of the
         *     function it is named after, with its limits; the tools act as the token's user and
         *     tenant, and a service token names `user_id` (and `tenant_id`) in the arguments.
         *
         *     A problem the model can act on (`invalid_request`, `not_found`, `conflict`,
         *     `payload_too_large`, `rate_limited`) is a tool result with `isError: true` whose text
         *     is the JSON object `{code, status, detail, errors?, retry_after?, request_id}` (no
         *     structured content: that is the tool's answer, as its output schema says). A caller refused (`forbidden`) is a JSON-RPC error -32003,
         *     a server fault (`unavailable`, `internal`) a JSON-RPC error -32603, each with the same
         *     object as `data`.
         */
        post: operations["mcp"];
        delete?: never;
        /** CORS preflight. */
        options: operations["mcpPreflight"];
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/memories": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Remember a fact without a turn; list, read, change and delete the user's long-term memories.
         * @description The long-term memories that `commit-turn` stores and `recall` and `get-context` rank.
         *     One operation per request, named by `op`; a field that is not one of the operation's
         *     is 400. Only unexpired memories exist for these operations: an expired one is never
         *     listed and answers 404 to `get`, `update` and `delete`, as does another user's or
         *     another tenant's memory, indistinguishably.
         *
         *     - `create {content, metadata?, agent?, ttl_seconds?}`: remembers one fact for the user
         *       without a turn, exactly as `commit-turn` stores the facts of a turn: under `agent`
         *       (default `default`, the agent of a turn that names none), `content` 1 to 20,000
         *       characters not only white space, `metadata` a JSON object of at most 16 KiB,
         *       `ttl_seconds` as in `commit-turn` (default: the configured retention). The same fact
         *       (the same normalised text) or a near-duplicate (`MEMORY_MERGE_SIMILARITY`) of the
         *       scope merges into that memory as a turn's fact would, whether it was stored by a
         *       turn or by `create`: it takes the new text and vector, the later expiry, and the new
         *       metadata's keys over its own. Answer 201 `{id, merged: false}` for a new memory,
         *       200 `{id, merged: true}` when it merged into an existing one (whose `id` it is). The
         *       fact is embedded before anything is locked; when the embedding provider is down it is
         *       stored without a vector (full-text search finds it) and embedded later by
         *       `embed-pending` or the scheduled run. Takes `Idempotency-Key` with the rules of
         *       `commit-turn`: a retry with the same key and body answers the first status and body
         *       with `Idempotent-Replayed: true` and changes nothing; the key with another body is 409
         *       `conflict`; keys belong to their caller.
         *     - `list {agent?, limit?, cursor?}`: newest first (`created_at` descending, then `id`
         *       descending). With `agent`, that agent's memories and the agent-less ones (what the
         *       agent recalls, as in `recall` and `get-context`); without it, every agent's. `limit`
         *       1 to 100, default 20. Answer `{items, next_cursor}`; cursors work as in `sessions`
         *       (opaque, `null` on the last page, passed back unchanged; a cursor of another listing
         *       is 400 naming `cursor`).
         *     - `get {id}`: one memory. A memory id names one memory of the user whatever its agent,
         *       so `get`, `update` and `delete` take no `agent` field (400).
         *     - `update {id, content?, metadata?}`: at least one of the two (400 naming `content`
         *       otherwise). New `content` (1 to 20,000 characters, not only white space) is embedded
         *       again and keyed again as a fact (the normalisation of `commit-turn`). When it is the
         *       same fact as another unexpired memory of the same user and agent, the answer is 409
         *       `conflict`, whose `detail` names that memory's id (unless a concurrent request stored
         *       the fact meanwhile), and nothing changes: delete or update one of the two. An expired
         *       memory holding that fact is deleted to make room. `metadata` (a JSON object of at most
         *       16 KiB once compacted) replaces the stored object as a whole, it is not merged; `{}`
         *       empties it; `null` is refused (400) as ambiguous. `expires_at` and `created_at` do not
         *       change; `updated_at` does. Answer: the updated memory.
         *     - `delete {id}`: answer `{deleted: true}`.
         *
         *     Storing the same fact again through `commit-turn` or `create` keeps one row per (user,
         *     agent) and refreshes it, so a list never shows a fact twice for one agent.
         *
         *     **Shared memories.** Memories of no user, per tenant: written by service callers, recalled
         *     by every user of their tenant beside their own (`recall`, `get-context`), marked
         *     `"shared": true` wherever they are shown (absent on a user's own memories). Every
         *     operation takes `shared: true` to act on them instead of a user's, without `user_id`
         *     (400 naming it). A service caller names the tenant with `tenant_id`; without it, the
         *     shared memories of no tenant, which only the users without a tenant recall (the whole
         *     deployment when it has no tenants): a user of a tenant never sees another tenant's
         *     shared memories, nor those of no tenant. `create` with `shared: true` stores under
         *     `agent` when given, else for every agent, and merges only with the same tenant's shared
         *     memories of that agent. A user may `list` and `get` (`shared: true`) their own tenant's
         *     shared memories; `get` without it also finds one; every write of theirs is 403
         *     `forbidden` (`create`/`update`/`delete` with `shared: true`, or `update`/`delete` of a
         *     shared memory's id, also by a service acting for a user) and changes nothing; another
         *     tenant's shared memory is 404. `forget-user` never erases shared memories; they expire
         *     with `ttl_seconds` (default the retention) as any memory.
         */
        post: operations["memories"];
        delete?: never;
        /** CORS preflight. */
        options: operations["memoriesPreflight"];
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/knowledge": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The tenant's shared knowledge base; ingest, search and delete documents.
         * @description Documents split into chunks for retrieval-augmented answers. The knowledge base is the
         *     tenant's, shared by every user of the tenant, not per user: there is no `user_id` (nor
         *     `agent`) field. A user token works on its own tenant's knowledge base (its
         *     `app_metadata.tenant_id`, or the tenant-less knowledge base when the token has none)
         *     and may repeat that `tenant_id`; naming another answers 403. A service caller names
         *     `tenant_id`, default `""` (the tenant-less knowledge base). Each tenant sees only its
         *     own documents: `source` names are per tenant. Chunks do not expire and `forget-user`
         *     does not touch them: they stay until replaced or deleted.
         *
         *     One operation per request, named by `op`; a field that is not one of the operation's
         *     is 400, like any unknown field.
         *
         *     - `ingest {source, content, metadata?}` (service callers only): splits `content` into
         *       chunks, embeds every chunk (a chunk the embedding provider could not embed is stored
         *       without a vector and embedded later) and stores them with `metadata`, in place of every chunk
         *       of an earlier ingest of the same `source` in this tenant. The replacement is one
         *       transaction: a concurrent search sees the old document or the new one, never a mix
         *       and never nothing. Concurrent ingests (and deletes) of one source are serialised; the
         *       last one wins whole. `content` that is empty or only white space is 400. Answer 201
         *       `{source, tenant_id, chunks, replaced}`.
         *     - `search {query, k?, mode?}` (users and service callers): the tenant's chunks ranked
         *       exactly as `recall` ranks memories (`hybrid` default, `vector` or `text`, with the
         *       same scores), best first, at most `k`. There is no filter and no `min_score`: in
         *       `vector` mode chunks may score below 0. Answer 200 `{results}`.
         *     - `delete {source}` (service callers only): removes every chunk of `source`. Answer 200
         *       `{source, tenant_id, deleted}`; 404 when the tenant has no such source.
         *
         *     A user token calling `ingest` or `delete` answers 403 once `op` is read, before the rest
         *     of the body is validated (a missing or unknown `op` is 400 first).
         *
         *     **Chunking.** Chunks are at most 1,000 characters (code points), without white space
         *     at either end, numbered from 0 (`chunk_index`) in document order. A chunk ends at the
         *     strongest break in the second half of its 1,000 characters, the latest one of that
         *     strength: a paragraph break (a blank line), else a sentence end or a line break, else a
         *     word boundary (white space, or between two characters of a script written without
         *     spaces, such as Chinese and Japanese). Only when the second half has no word boundary is
         *     the latest earlier one used, and only a single word longer than a chunk is cut between
         *     two characters. A chunk cut inside a paragraph is followed by one that repeats up to 150
         *     characters of its end, starting at a sentence or, failing that, a word, so that a
         *     sentence cut at a border is whole in one of the two; a chunk cut at a paragraph break is
         *     followed by the next paragraph, without overlap. Size and overlap are fixed (not
         *     configurable per request).
         */
        post: operations["knowledge"];
        delete?: never;
        /** CORS preflight. */
        options: operations["knowledgePreflight"];
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/forget-user": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Erase everything stored for a user, in one transaction.
         * @description Deletes the user's rows from every table that holds user rows, all or nothing: sessions,
         *     messages, long-term memories, key/value memory, state, notes, active-session pointers,
         *     idempotency records, the user's rate-limit counters (`request_rates`; a tenant's own
         *     counter is not the user's and stays), the user's queued jobs of the outbox (`jobs`), and
         *     any table with a `user_id` column added later (the tables are
         *     found at run time, not listed in code). Expired rows not yet swept go too. The shared
         *     knowledge base belongs to the tenant, not to the user, and is untouched.
         *
         *     - A user erases themself, within their token's tenant only. They may repeat their own
         *       `user_id` and `tenant_id`; naming anyone else's answers 403.
         *     - A service caller names `user_id` (required, 400 without). With `tenant_id` it erases
         *       the user's rows in that tenant only (`""`: the tenant-less scope); **without
         *       `tenant_id` it erases the user's rows in every tenant** (an erasure request about a
         *       person), and the answer's `tenant_id` is null.
         *
         *     The answer counts the rows deleted per table, for every table that holds user rows
         *     (zeros included), keyed by table name. Erasing again answers zeros: this function never
         *     answers 404. Writes that begin after the erasure commits are not undone: halt the
         *     user's agents first (for example with `user-state`) when that matters.
         *
         *     Deleting the user in Supabase Auth (a row of `auth.users`) does the same erasure, in
         *     every tenant, in the transaction of the delete, without calling this function.
         *
         *     With adapters enabled (`ADAPTERS`), the erasure also writes, in its transaction, one
         *     `onUserForgotten` job per adapter, so each learns of it (the user's queued jobs having
         *     gone with the rest). With the Redis cache (`redis`), the user's cached get-context
         *     windows are deleted before this function answers (after an Auth deletion, when the
         *     erasure's job is delivered).
         */
        post: operations["forgetUser"];
        delete?: never;
        /** CORS preflight. */
        options: operations["forgetUserPreflight"];
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/intents": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Ask every enabled adapter to sync or backfill a session.
         * @description The orchestrator's intents besides committing a turn (`onTurnCommitted`, which
         *     `commit-turn` is) and fetching a context (`fetchContext`, which `get-context` is). Each
         *     writes one job per enabled adapter (`ADAPTERS`) in one transaction and answers 202 at
         *     once; `process-jobs` delivers the jobs. Without an enabled adapter the session is still
         *     checked and `jobs` is empty.
         *
         *     - `syncSession`: every adapter receives the session's current state (agent, title,
         *       last seq, message count, times) as one event, read when the job is delivered (a
         *       session gone by then is delivered as removed).
         *     - `backfillSession`: every adapter receives every message the session holds up to its
         *       last seq at the time of the intent, in pages of 100 seqs, each page an event of its
         *       own id (derived from `intent_id`, the same on every retry); empty pages are skipped.
         *       Backfills of one session coalesce: for an adapter whose backfill of the session is
         *       still `pending` (not delivered yet, nor being delivered), no job is written; that job
         *       answers in `jobs` (same id). It covers the messages up to the session's last seq when
         *       it was written; those committed since reach the adapter with their turns' own jobs.
         *       When every adapter's did, nothing is written, `coalesced` is `true` and `intent_id` is
         *       the earlier request's. A burst of backfills of one session thus delivers it once per
         *       adapter. Backfills also count against a per-user limit of their own
         *       (`RATE_LIMIT_BACKFILL_PER_HOUR`, 30 by default; see 429).
         *
         *     A user names their own session; a service caller names `user_id` too (and `tenant_id`
         *     when the session has one). A session that is missing, expired, or another user's or
         *     tenant's answers 404, indistinguishably. The event id of the intent's jobs is
         *     `intent_id`.
         */
        post: operations["intents"];
        delete?: never;
        /** CORS preflight. */
        options: operations["intentsPreflight"];
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * List, read, retry and purge the outbox's jobs (service callers only).
         * @description Service callers only: a user token answers 403 (before the body is read). The jobs of
         *     every user, one per enabled adapter and change (see `Job`); a job holds no content, and
         *     `last_error` never holds any.
         *
         *     - `list {status?, adapter?, limit?, cursor?}`: newest first (`created_at` descending,
         *       then `id`); `limit` 1 to 200, default 50. Answer `{jobs, next_cursor}`; cursors work
         *       as in `sessions` (opaque, `null` on the last page).
         *     - `get {id}`: one job (404 when there is none).
         *     - `retry {id}`: a `dead` job becomes `pending`, due now, with `attempts` counted afresh;
         *       a job of any other status answers 409 `conflict`. Answer: the job.
         *     - `purge {status, older_than_seconds?}`: delete `done` or `dead` jobs that finished at
         *       least `older_than_seconds` ago (default 0: all of them), at most 100,000 per call.
         *       Answer `{deleted}`. `process-jobs` itself deletes `done` jobs older than
         *       `JOBS_DONE_RETENTION` (24 h by default).
         */
        post: operations["jobs"];
        delete?: never;
        /** CORS preflight. */
        options: operations["jobsPreflight"];
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/process-jobs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Deliver due jobs to the enabled adapters (service callers only).
         * @description Service callers only: a user token answers 403 (before the body is read).
         *
         *     Claims due jobs (pending ones whose time has come, and running ones whose lease,
         *     `JOBS_LEASE`, has passed because their worker died) in short transactions with
         *     `for update skip locked`, so concurrent runs never take the same job nor wait for each
         *     other; delivers each outside any transaction: its event is read from the database then
         *     (the content as stored at that moment), its content passed through PII redaction, and
         *     handed to its adapter; then records the outcome: `done`, or a retry after an
         *     exponential backoff with jitter (`JOBS_BACKOFF_BASE` * 2^(attempt-1), at most
         *     `JOBS_BACKOFF_MAX`, less a random part of up to half; an adapter's `Retry-After` is
         *     honoured), or `dead` at the attempt cap (`JOBS_MAX_ATTEMPTS`), with `last_error`. A job
         *     whose lease passed after its last allowed attempt goes `dead` without another delivery.
         *     Within a run, the jobs of one adapter and user are delivered one after the other, oldest
         *     first, others in parallel (`JOBS_CONCURRENCY`); a retried job may arrive after later
         *     events, which carry their seqs and `occurred_at` to order by. An adapter's failure, however
         *     malformed its answer, is never this request's error: it is a job's outcome.
         *
         *     It goes on until no job is due, `limit` jobs were handled or the time budget is spent:
         *     `max_duration_ms`, bounded by the request's deadline less headroom, as `sweep-expired`.
         *     `more: true` means due jobs remain: call again. It then deletes `done` jobs older than
         *     `JOBS_DONE_RETENTION`.
         *
         *     **Other triggers.** The deployed function also runs on an EventBridge schedule
         *     (`rate(1 minute)`, for retries that come due) and when a function that wrote jobs
         *     invokes it asynchronously (`JOBS_NOTIFY`, event
         *     `{"source": "agentmem", "detail-type": "Process Jobs"}`), with the defaults
         *     (`limit` 1000, `max_duration_ms` 20000); only AWS principals allowed to invoke it can
         *     send either. `agentmem serve` delivers by itself right after each change and every
         *     `JOBS_POLL_INTERVAL`.
         */
        post: operations["processJobs"];
        delete?: never;
        /** CORS preflight. */
        options: operations["processJobsPreflight"];
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /**
         * Format: uuid
         * @description A UUID in its canonical 36-character hyphenated form (hex digits of either case).
         */
        UUID: string;
        /**
         * Format: date-time
         * @description RFC 3339, in UTC.
         */
        Timestamp: string;
        /** @description The agent, 1 to 64 characters of `A-Z a-z 0-9 _ . : -`. */
        Agent: string;
        /**
         * @description The user to act for: 1 to 255 printable characters (a Supabase Auth UUID, or any other
         *     id such as `user_2abc...` or `auth0|123`; a UUID in upper case names the same user).
         *     Required for service callers. A user caller may give only their own id; another id
         *     answers 403 `forbidden`.
         * @example user_2abcDEF123
         */
        UserID: string;
        /**
         * @description The tenant to act in, at most 128 characters (code points) without control characters;
         *     `""` means no tenant. Service callers: optional, default no tenant. A user caller may give only the
         *     tenant of their token (`""` when it has none); another answers 403 `forbidden`.
         */
        TenantID: string;
        /** @description A JSON object of at most 16 KiB (16,384 bytes once compacted). `null` means none. */
        Metadata: {
            [key: string]: unknown;
        };
        /**
         * @description Stable, machine-readable error code, with its HTTP status:
         *
         *     | code | status | when |
         *     |---|---|---|
         *     | invalid_request | 400 | malformed JSON, wrong types, out-of-range values, unknown fields, NUL characters, invalid UTF-8 |
         *     | unauthenticated | 401 | missing, malformed, expired or badly signed token; wrong audience, issuer or role |
         *     | forbidden | 403 | a user token calling a service-only function or operation; `user_id` / `tenant_id` naming someone else; an anonymous user when `AUTH_ALLOW_ANONYMOUS=false` |
         *     | not_found | 404 | the named resource (session, message, memory, key, state, notes section, knowledge source) does not exist for this caller |
         *     | method_not_allowed | 405 | anything but POST / OPTIONS |
         *     | conflict | 409 | an Idempotency-Key reused with a different body; a `memories` `update` to the same fact as another memory |
         *     | payload_too_large | 413 | body over 1 MiB |
         *     | request_header_fields_too_large | 431 | request line and headers over 64 KiB |
         *     | unsupported_media_type | 415 | non-empty body that is not declared JSON |
         *     | rate_limited | 429 | the user or their tenant is over its request limit (see "Rate limits"); with `Retry-After`; nothing was written |
         *     | unavailable | 503 | database unreachable or busy, pool exhausted, deadline hit; with `Retry-After`; nothing was written |
         *     | internal | 500 | a bug; `detail` is generic and the cause is logged under the request id |
         * @enum {string}
         */
        ErrorCode: "invalid_request" | "unauthenticated" | "forbidden" | "not_found" | "method_not_allowed" | "conflict" | "payload_too_large" | "request_header_fields_too_large" | "unsupported_media_type" | "rate_limited" | "unavailable" | "internal";
        FieldError: {
            /**
             * @description What is invalid: a JSON path into the body such as `messages[2].role` or
             *     `messages[0].tool_calls[1].function.name`; for a value of the wrong JSON type the
             *     path without array indexes (`messages.role`); for an unknown field its name; for the
             *     idempotency header `Idempotency-Key`.
             * @example messages[2].role
             */
            field: string;
            /**
             * @description What is wrong with it, in English, safe to show.
             * @example must be one of user, assistant, system, tool
             */
            message: string;
        };
        /**
         * @description RFC 9457 problem details (`application/problem+json`).
         * @example {
         *       "type": "about:blank",
         *       "title": "Bad Request",
         *       "status": 400,
         *       "code": "invalid_request",
         *       "detail": "messages[2].role must be one of user, assistant, system, tool",
         *       "errors": [
         *         {
         *           "field": "messages[2].role",
         *           "message": "must be one of user, assistant, system, tool"
         *         }
         *       ],
         *       "request_id": "3f0f2a4e-5a44-4d63-9d0a-6c2f8b1d9e7a"
         *     }
         */
        Problem: {
            /** @constant */
            type: "about:blank";
            /**
             * @description The HTTP reason phrase of `status`.
             * @example Bad Request
             */
            title: string;
            /** @description The HTTP status of the answer. */
            status: number;
            code: components["schemas"]["ErrorCode"];
            /**
             * @description Human-readable and safe to show. For validation failures, the first invalid field and
             *     its message, followed by `(and N more)` when there are more.
             */
            detail: string;
            /** @description Every invalid field found, in order; present only on 400s about fields. */
            errors?: components["schemas"]["FieldError"][];
            /** @description The same value as the `X-Request-Id` header. */
            request_id: string;
        };
        /** @description All fields optional; an empty body is `{}`. */
        ActiveSessionRequest: {
            /** @default default */
            agent?: components["schemas"]["Agent"];
            /**
             * @description resolve: the client's remembered id, compared with the active one (`matched`).
             *     activate: required, the session to make active (own, same agent) or an unused id
             *     to create. new: not allowed (400).
             */
            session_id?: components["schemas"]["UUID"];
            /**
             * @default resolve
             * @enum {string}
             */
            mode?: "resolve" | "activate" | "new";
            /**
             * @description The metadata of a session this request creates: a JSON object of at most 16 KiB
             *     (compacted); anything else is 400 and creates nothing. A session that exists keeps
             *     its own. Absent or null: `{}`.
             */
            metadata?: Record<string, unknown> | null;
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        ActiveSession: {
            session_id: components["schemas"]["UUID"];
            agent: components["schemas"]["Agent"];
            /** @description Whether this request created the session. */
            created: boolean;
            /** @description Whether the request's `session_id` is the session answered (always false without one). */
            matched: boolean;
            /** @description When the session was last active. Every resolve and activation (this request included) and every commit to it refreshes it. */
            last_active_at: components["schemas"]["Timestamp"];
            /** @description When the session was created. */
            created_at: components["schemas"]["Timestamp"];
            metadata: components["schemas"]["SessionMetadataObject"];
            last_synced_at: components["schemas"]["LastSyncedAt"];
        };
        /** @description The session's metadata, `{}` when none. */
        SessionMetadataObject: Record<string, unknown>;
        /**
         * Format: date-time
         * @description When the enabled adapters last caught up with the session: set by `process-jobs` when
         *     it records a job of the session done while none of the session's adapter jobs is
         *     pending or running, nor dead for that change or a later one. `null` until then, and
         *     when no adapter is enabled.
         */
        LastSyncedAt: string | null;
        CommitTurnRequest: {
            /** @description The session, chosen by the client; created on first commit. */
            session_id: components["schemas"]["UUID"];
            /** @default default */
            agent?: components["schemas"]["Agent"];
            messages: components["schemas"]["MessageIn"][];
            /** @description Long-term facts of the user under this agent. Absent, null or `[]` means none. */
            memories?: components["schemas"]["MemoryIn"][];
            /**
             * @description Lifetime of every row written, in seconds (at most 10 years). Default: the configured
             *     `DEFAULT_RETENTION` (720 h unless configured).
             */
            ttl_seconds?: number;
            /**
             * @description Service callers only (a user token: 400). How many of this session's messages stay
             *     live from now on, over the deployment's `HISTORY_KEEP_MESSAGES`: 0 for no cap, or
             *     500 (the largest `get-context` window) to 1,000,000. The sweep archives (or
             *     deletes, `HISTORY_OVERFLOW=delete`) the older ones, never one that `get-context`
             *     could still read or the session's rolling summary has not covered. Absent: the
             *     session keeps the cap it had.
             */
            keep_messages?: number;
            /**
             * @description `false` opts this turn out of fact extraction. Where the deployment extracts facts
             *     (`EXTRACT_FACTS=true`), a committed turn with new messages is handed to the chat model
             *     afterwards, outside this request, which stores the facts worth remembering as
             *     memories of this agent (metadata `source: extraction`, `session_id`, `seq_from`,
             *     `seq_to`). Where it does not, `true` changes nothing.
             * @default true
             */
            extract?: boolean;
            /**
             * @description `true` stores only the turn's answers: its system, user and assistant text, leaving
             *     out tool messages and the tool calls of assistant messages, and an assistant message
             *     left without text. The whole turn is validated as without it. `messages` in the
             *     answer lists the messages kept, in order; a turn of tool work alone keeps none.
             *     A message left out is never looked up by its `id`, so a retry leaves it out again
             *     and stores the others once; a turn with nothing left still stores its `memories`
             *     and creates or refreshes its session.
             * @default false
             */
            answers_only?: boolean;
            /**
             * @description The metadata of the session when this turn creates it, as `active-session`'s
             *     `metadata`: a JSON object of at most 16 KiB; a session that exists keeps its own.
             */
            session_metadata?: Record<string, unknown> | null;
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        /**
         * @description One message. `content` is required except on an assistant message with non-empty
         *     `tool_calls`, where it may be absent or empty (stored as `""`); on every other message
         *     it must be non-empty.
         */
        MessageIn: {
            id?: components["schemas"]["MessageID"];
            /** @enum {string} */
            role: "user" | "assistant" | "system" | "tool";
            content?: components["schemas"]["MessageContent"];
            /** @description Optional participant name, 1 to 256 characters, on any role. */
            name?: string;
            /**
             * @description Function calls requested by the message: assistant messages only (on any other role,
             *     even `[]`, 400). Ids unique within the message. `null` or `[]` on an assistant
             *     message means none. Nothing checks that later tool messages answer every call;
             *     `get-context` leaves incomplete calls out of its window.
             */
            tool_calls?: components["schemas"]["ToolCall"][];
            /**
             * @description Required on `tool` messages, not allowed on any other role: the id of the call this
             *     message answers. At most 255 bytes of UTF-8. It is not checked against earlier calls.
             */
            tool_call_id?: string;
            metadata?: components["schemas"]["Metadata"];
            /**
             * Format: date-time
             * @description Service callers only (a user token: 400 naming the field). When the message was
             *     said, for importing a history: RFC 3339 with `Z` or an offset, from
             *     `2000-01-01T00:00:00Z` to 5 minutes after the commit's time. Absent or `null`: the
             *     commit's time. It does not change `seq` (the order given) nor `expires_at` (from
             *     the commit's time).
             * @example 2024-05-01T09:30:00+02:00
             */
            created_at?: string | null;
        };
        /**
         * @description A string of at most 100,000 characters (code points), or an array of 1 to 100 content
         *     parts whose text (the `text` parts' texts joined by `\n`) is at most 100,000 characters.
         */
        MessageContent: string | components["schemas"]["ContentPart"][];
        /**
         * @description One part of a message's content, as the Chat Completions API takes it: a `text` part,
         *     or any other part (`image_url`, `input_audio`, `file`, ...), kept as given, at most
         *     64 KiB of compact JSON.
         */
        ContentPart: components["schemas"]["TextPart"] | components["schemas"]["OtherPart"];
        /**
         * @example {
         *       "type": "text",
         *       "text": "What is on this picture?"
         *     }
         */
        TextPart: {
            /** @constant */
            type: "text";
            text: string;
        };
        /**
         * @example {
         *       "type": "image_url",
         *       "image_url": {
         *         "url": "https://example.com/cat.jpg",
         *         "detail": "low"
         *       }
         *     }
         */
        OtherPart: {
            /** @description The part's type, e.g. `image_url`, `input_audio`, `file`. */
            type: string;
        } & {
            [key: string]: unknown;
        };
        /** @description A call as the Chat Completions API shapes it. */
        ToolCall: {
            /** @description 1 to 255 bytes of UTF-8, unique within the message. */
            id: string;
            /** @constant */
            type: "function";
            function: components["schemas"]["FunctionCall"];
        };
        FunctionCall: {
            name: string;
            /**
             * @description The arguments as a JSON-encoded string, stored as given (not parsed).
             * @default
             */
            arguments?: string;
        };
        MemoryIn: {
            /** @description The fact, 1 to 20,000 characters (code points), not only white space. */
            content: string;
            metadata?: components["schemas"]["Metadata"];
        };
        /**
         * @description The client's id of the message: 1 to 255 printable characters (a UUID, LangGraph's
         *     `run-...`, LangChain's `lc_run--...`). A message whose id this session already holds is
         *     not stored again. Unique within a request. Default: a generated UUID.
         * @example lc_run--3f2a9c1e-8b7d-4c6e-9f10-2a3b4c5d6e7f-0
         */
        MessageID: string;
        StoredMessage: {
            /** @description The client's id of the message, or a UUID the server chose. */
            id: string;
            /** @description Position in the session, strictly increasing in commit order. */
            seq: number;
            created_at: components["schemas"]["Timestamp"];
        };
        CommitResult: {
            session_id: components["schemas"]["UUID"];
            /**
             * @description One entry per message of the request, in the same order (for a message already stored
             *     under its client id, where it was stored). With `answers_only`, one entry per message
             *     kept, in the request's order: a message left out has none.
             */
            messages: components["schemas"]["StoredMessage"][];
            /** @description One entry per memory of the request, in the same order; the same fact answers the same id. */
            memories: {
                id: components["schemas"]["UUID"];
            }[];
        };
        GetContextRequest: {
            session_id: components["schemas"]["UUID"];
            /** @default default */
            agent?: components["schemas"]["Agent"];
            /**
             * @description How many of the most recent messages are read before the window rules apply.
             * @default 20
             */
            max_messages?: number;
            /** @description Budget for the window's token estimate. Default: no budget. */
            max_tokens?: number;
            /** @description Text to recall memories for, at most 4,096 characters. Absent or `""`: no recall. */
            query?: string;
            /**
             * @description How many memories to recall for `query`; 0 recalls none.
             * @default 5
             */
            recall_k?: number;
            /**
             * @description `raw`: stored messages with every field. `openai`: Chat Completions message objects.
             *     `langchain`: LangChain stored messages. `anthropic`: Messages API messages, with
             *     `system` apart. See the operation's description.
             * @default raw
             * @enum {string}
             */
            format?: "raw" | "openai" | "langchain" | "anthropic";
            /**
             * Format: date-time
             * @description RFC 3339 timestamp (with `Z` or an offset): only messages created at or after it.
             * @example 2026-11-23T09:00:00Z
             */
            since?: string;
            /**
             * @description Leave out tool messages and the tool calls of assistant messages; an assistant
             *     message with no text left is left out.
             * @default false
             */
            answers_only?: boolean;
            /**
             * @description Add `user_context` to the answer: a short text of the user's mode, key/value memory
             *     (one `key: value` line each) and notes, cut to about 500 tokens, the text the `mcp`
             *     function's `get_user_context` tool gives.
             * @default false
             */
            user_context?: boolean;
            /**
             * @description Recall the shared memories of the user's tenant (see `memories`) beside the user's own for `query`, each marked `shared: true`; false leaves them out.
             * @default true
             */
            include_shared?: boolean;
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        /** @description A JSON-RPC 2.0 message of the Model Context Protocol. */
        JSONRPCMessage: {
            /** @constant */
            jsonrpc: "2.0";
            id?: string | number;
            method?: string;
            params?: Record<string, unknown>;
            result?: Record<string, unknown>;
            error?: Record<string, unknown>;
        };
        RawMessage: {
            /** @description The client's id of the message, or a UUID the server chose. */
            id: string;
            seq: number;
            /** @enum {string} */
            role: "user" | "assistant" | "system" | "tool";
            /** @description As committed, a string or content parts. */
            content: components["schemas"]["MessageContent"];
            name: string | null;
            /** @description null when the message has none. */
            tool_calls: components["schemas"]["ToolCall"][] | null;
            tool_call_id: string | null;
            /** @description `{}` when the message has none. */
            metadata: Record<string, unknown>;
            created_at: components["schemas"]["Timestamp"];
        };
        /**
         * @description Exactly a message object of the Chat Completions API, one shape per role (as the API's
         *     SDKs type them: `ChatCompletionMessageParam` of the `openai` package takes the list as it
         *     is): `content` is null for an assistant message with tool calls and empty content; `name`
         *     appears on user, system and assistant messages that have one (never on tool messages);
         *     `tool_calls` and `tool_call_id` appear only when set. No id, seq, metadata or timestamp.
         *
         *     Content parts are given as committed. Their types are the parts the API takes for each
         *     role (text, `image_url`, `input_audio` and `file` from a user; text elsewhere, and
         *     `refusal` from an assistant): a part committed in another shape comes back as it is, and
         *     the API would refuse it.
         *
         *     `name` is one the API takes (`^[a-zA-Z0-9_-]{1,64}$`): a stored name that fits is given
         *     as it is; another has each run of other characters (spaces, punctuation, any non-ASCII
         *     letter) replaced by one `_`, leading and trailing ones dropped, and is cut to 64
         *     characters (`Ada Lovelace` becomes `Ada_Lovelace`); when no ASCII letter or digit is
         *     left (`李雷`, `!!!`), the message has no `name`. The `raw` format always gives the name
         *     as stored.
         */
        OpenAIMessage: components["schemas"]["OpenAISystemMessage"] | components["schemas"]["OpenAIUserMessage"] | components["schemas"]["OpenAIAssistantMessage"] | components["schemas"]["OpenAIToolMessage"];
        OpenAISystemMessage: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            role: "system";
            content: string | components["schemas"]["OpenAITextPart"][];
            name?: components["schemas"]["OpenAIName"];
        };
        OpenAIUserMessage: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            role: "user";
            content: string | components["schemas"]["OpenAIUserPart"][];
            name?: components["schemas"]["OpenAIName"];
        };
        OpenAIAssistantMessage: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            role: "assistant";
            /** @description A string or content parts; null with tool calls and no content. */
            content: string | components["schemas"]["OpenAIAssistantPart"][] | null;
            name?: components["schemas"]["OpenAIName"];
            tool_calls?: components["schemas"]["OpenAIToolCall"][];
        };
        OpenAIToolMessage: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            role: "tool";
            content: string | components["schemas"]["OpenAITextPart"][];
            tool_call_id: string;
        };
        OpenAIName: string;
        /** @description A tool call as the Chat Completions API takes it; `arguments` always present. */
        OpenAIToolCall: {
            id: string;
            /** @constant */
            type: "function";
            function: {
                name: string;
                arguments: string;
            };
        };
        OpenAITextPart: {
            /** @constant */
            type: "text";
            text: string;
        };
        /** @description A part of a user message as the Chat Completions API takes it. */
        OpenAIUserPart: components["schemas"]["OpenAITextPart"] | {
            /** @constant */
            type: "image_url";
            image_url: {
                url: string;
                /** @enum {string} */
                detail?: "auto" | "low" | "high" | "original";
            };
        } | {
            /** @constant */
            type: "input_audio";
            input_audio: {
                data: string;
                /** @enum {string} */
                format: "wav" | "mp3";
            };
        } | {
            /** @constant */
            type: "file";
            file: {
                file_data?: string;
                file_id?: string;
                filename?: string;
            };
        };
        /** @description A part of an assistant message as the Chat Completions API takes it. */
        OpenAIAssistantPart: components["schemas"]["OpenAITextPart"] | {
            /** @constant */
            type: "refusal";
            refusal: string;
        };
        Hit: {
            /** @description A memory's UUID, or a message's id (see MessageID). */
            id: string;
            content: string;
            /** @description Higher is better; its meaning depends on the mode (see `recall`). */
            score: number;
            /** @description The memory's metadata, `{}` when none. */
            metadata: Record<string, unknown>;
            created_at: components["schemas"]["Timestamp"];
            /**
             * @description A shared memory of the user's tenant (see `memories`); absent on the user's own.
             * @constant
             */
            shared?: true;
        };
        Usage: {
            /** @description Number of stored messages the answer carries (in `anthropic`, before merging). */
            messages: number;
            /** @description Sum of the token estimates of the window's messages. */
            token_estimate: number;
            /**
             * @description Whether any of the messages read (the most recent `max_messages`) was left out of the
             *     window, by the unit rules or by `max_tokens`. It does not report older messages
             *     beyond `max_messages`.
             */
            truncated: boolean;
            /**
             * @description Messages of the window the format cannot carry and left out (`anthropic`: the
             *     assistant messages before the first user message, with their tool results, and
             *     messages left with no content). 0 in the other formats.
             */
            dropped_messages: number;
            /**
             * @description Content parts of the messages returned that the format cannot carry and left out
             *     (`anthropic`: parts other than text, images and PDF files). 0 in the other formats.
             */
            dropped_parts: number;
        };
        /** @description The answer with `format` `raw`. */
        ContextRaw: {
            session_id: components["schemas"]["UUID"];
            /** @description The window, oldest first. */
            messages: components["schemas"]["RawMessage"][];
            memories: components["schemas"]["Hit"][];
            user_memory: {
                [key: string]: Record<string, unknown>;
            };
            state: string | null;
            notes: string | null;
            summary: components["schemas"]["Summary"];
            usage: components["schemas"]["Usage"];
            /** @description The user context text, when the request set `user_context`. */
            user_context?: string;
        };
        /** @description The answer with `format` `openai`; the same as `raw` except the messages. */
        ContextOpenAI: {
            session_id: components["schemas"]["UUID"];
            /** @description The window, oldest first. */
            messages: components["schemas"]["OpenAIMessage"][];
            memories: components["schemas"]["Hit"][];
            user_memory: {
                [key: string]: Record<string, unknown>;
            };
            state: string | null;
            notes: string | null;
            summary: components["schemas"]["Summary"];
            usage: components["schemas"]["Usage"];
            /** @description The user context text, when the request set `user_context`. */
            user_context?: string;
        };
        /** @description The answer with `format` `langchain`; the same as `raw` except the messages. */
        ContextLangChain: {
            session_id: components["schemas"]["UUID"];
            /** @description The window, oldest first. */
            messages: components["schemas"]["LangChainMessage"][];
            memories: components["schemas"]["Hit"][];
            user_memory: {
                [key: string]: Record<string, unknown>;
            };
            state: string | null;
            notes: string | null;
            summary: components["schemas"]["Summary"];
            usage: components["schemas"]["Usage"];
            /** @description The user context text, when the request set `user_context`. */
            user_context?: string;
        };
        /**
         * @description The answer with `format` `anthropic`: `system` and `messages` as the Messages API takes
         *     them; `usage` counts what was left out.
         */
        ContextAnthropic: {
            session_id: components["schemas"]["UUID"];
            /** @description The text of the window's system messages, joined by a blank line; null when none. */
            system: string | null;
            /** @description The window, oldest first, a user message first, roles alternating. */
            messages: components["schemas"]["AnthropicMessage"][];
            memories: components["schemas"]["Hit"][];
            user_memory: {
                [key: string]: Record<string, unknown>;
            };
            state: string | null;
            notes: string | null;
            summary: components["schemas"]["Summary"];
            usage: components["schemas"]["Usage"];
            /** @description The user context text, when the request set `user_context`. */
            user_context?: string;
        };
        /**
         * @description The session's rolling summary: the gist of its messages up to `through_seq`, or null
         *     when it has none (rolling summaries are off unless the deployment sets `SUMMARIES=true`,
         *     and a session gets one once its messages pass `SUMMARY_TRIGGER_TOKENS`). `messages`
         *     then begins after `through_seq`: a summary that lags behind leaves no gap, as every
         *     message after it is still returned, as many as `max_messages` and `max_tokens` allow
         *     (the summary's own tokens are not counted against `max_tokens`).
         */
        Summary: {
            content: string;
            through_seq: number;
            updated_at: components["schemas"]["Timestamp"];
        } | null;
        /**
         * @description A LangChain stored message (`mapStoredMessagesToChatMessages` reads it).
         * @example {
         *       "type": "ai",
         *       "data": {
         *         "content": "",
         *         "additional_kwargs": {
         *           "tool_calls": [
         *             {
         *               "id": "call_1",
         *               "type": "function",
         *               "function": {
         *                 "name": "lookup",
         *                 "arguments": "{\"q\":\"units\"}"
         *               }
         *             }
         *           ]
         *         },
         *         "response_metadata": {},
         *         "type": "ai",
         *         "name": null,
         *         "id": "0b6f3c1e-6f0a-4a53-9a43-2f7c1b1d5e10",
         *         "tool_calls": [
         *           {
         *             "name": "lookup",
         *             "args": {
         *               "q": "units"
         *             },
         *             "id": "call_1",
         *             "type": "tool_call"
         *           }
         *         ],
         *         "invalid_tool_calls": []
         *       }
         *     }
         */
        LangChainMessage: {
            /** @enum {string} */
            type: "human" | "ai" | "system" | "tool";
            data: {
                /** @description As committed. */
                content: components["schemas"]["MessageContent"];
                /** @description `{}`, or on an `ai` message with tool calls `{tool_calls: [...]}` as the Chat Completions API shapes them. */
                additional_kwargs: {
                    tool_calls?: components["schemas"]["ToolCall"][];
                };
                /** @description The message's metadata, `{}` when none. */
                response_metadata: Record<string, unknown>;
                /** @enum {string} */
                type: "human" | "ai" | "system" | "tool";
                /** @description The message's name, null when it has none (as `messages_to_dict` writes it). */
                name: string | null;
                id: string;
                /** @description `ai` messages only. */
                tool_calls?: components["schemas"]["LangChainToolCall"][];
                /** @description `ai` messages only: the calls whose arguments are not a JSON object. */
                invalid_tool_calls?: components["schemas"]["LangChainInvalidToolCall"][];
                /** @description `tool` messages only. */
                tool_call_id?: string;
            };
        };
        LangChainToolCall: {
            name: string;
            args: Record<string, unknown>;
            id: string;
            /** @constant */
            type: "tool_call";
        };
        LangChainInvalidToolCall: {
            name: string;
            /** @description The arguments as stored. */
            args: string;
            id: string;
            error: string;
            /** @constant */
            type: "invalid_tool_call";
        };
        /** @description A message of the Anthropic Messages API (`MessageParam` of `@anthropic-ai/sdk` takes it as it is). */
        AnthropicMessage: {
            /** @enum {string} */
            role: "user" | "assistant";
            content: string | components["schemas"]["AnthropicBlock"][];
        };
        /** @description A content block of the Messages API. */
        AnthropicBlock: components["schemas"]["AnthropicTextBlock"] | components["schemas"]["AnthropicImageBlock"] | components["schemas"]["AnthropicDocumentBlock"] | components["schemas"]["AnthropicToolUseBlock"] | components["schemas"]["AnthropicToolResultBlock"];
        AnthropicTextBlock: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            type: "text";
            text: string;
        };
        AnthropicImageBlock: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            type: "image";
            /** @description `{type: base64, media_type, data}` or `{type: url, url}`. */
            source: {
                /** @constant */
                type: "base64";
                /** @enum {string} */
                media_type: "image/jpeg" | "image/png" | "image/gif" | "image/webp";
                data: string;
            } | components["schemas"]["AnthropicURLSource"];
        };
        AnthropicDocumentBlock: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            type: "document";
            /** @description A PDF: `{type: base64, media_type: application/pdf, data}`. */
            source: {
                /** @constant */
                type: "base64";
                /** @constant */
                media_type: "application/pdf";
                data: string;
            } | components["schemas"]["AnthropicURLSource"];
            /** @description A document's file name, when the part named one. */
            title?: string;
        };
        AnthropicURLSource: {
            /** @constant */
            type: "url";
            url: string;
        };
        AnthropicToolUseBlock: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            type: "tool_use";
            id: string;
            name: string;
            input: Record<string, unknown>;
        };
        AnthropicToolResultBlock: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            type: "tool_result";
            tool_use_id: string;
            /** @description Absent when the result has nothing the API can carry. */
            content?: string | (components["schemas"]["AnthropicTextBlock"] | components["schemas"]["AnthropicImageBlock"] | components["schemas"]["AnthropicDocumentBlock"])[];
        };
        RecallRequest: {
            /** @description 1 to 4,096 characters (code points). */
            query: string;
            /** @default 10 */
            k?: number;
            /** @description This agent's and agent-less memories only, and this agent's messages. Default (absent): every agent's. */
            agent?: components["schemas"]["Agent"];
            /**
             * @default hybrid
             * @enum {string}
             */
            mode?: "hybrid" | "vector" | "text";
            /**
             * @description What to search: the long-term memories, the messages of past conversations, or both as one ranking. Anything else answers 400 naming `source`.
             * @default memories
             * @enum {string}
             */
            source?: "memories" | "messages" | "all";
            /** @description Exact equality of top-level metadata keys; at most 16 KiB. Absent, null or `{}`: no filter. */
            filter?: components["schemas"]["Metadata"];
            /**
             * @description Drop results scoring below this (any number).
             * @default 0
             */
            min_score?: number;
            /** @description Drop results whose `relevance` is below this. Default: the deployment's `RECALL_MIN_RELEVANCE` (0 unless set: every result is kept). */
            min_relevance?: number;
            /** @description Keep memories and messages created at or after this time (RFC 3339). */
            since?: components["schemas"]["Timestamp"];
            /** @description Keep memories and messages created before this time (RFC 3339); after `since` when both are given. */
            until?: components["schemas"]["Timestamp"];
            /** @description Keep the messages whose speaker (`name`) is this, compared case-insensitively. Only with `source` `messages` or `all` (memories, which have no speaker, are then left out); with `memories`: 400 naming `source`. */
            speaker?: string;
            /**
             * @description Keep the messages of this role. Only with `source` `messages` or `all` (memories are then left out); with `memories`: 400 naming `source`.
             * @enum {string}
             */
            role?: "user" | "assistant" | "system" | "tool";
            /**
             * @description Give each message result the turns up to this many seqs before and after it in its session, as `context`, in seq order; a turn that is a result itself or was given beside a better result is not repeated.
             * @default 0
             */
            neighbours?: number;
            /** @description Absent (default): results in the ranking's order. Given: the answer is diversified by maximal marginal relevance among the best max(4k, 20) (at most 200) results: each next result maximises lambda x relevance - (1 - lambda) x its greatest cosine similarity to the results already chosen (relevance is the score divided by the best one). 1 keeps the ranking's order; lower values prefer results unlike those above them. Scores are the ranking's, so they need not decrease. */
            mmr_lambda?: number;
            /**
             * @description Rank the shared memories of the user's tenant (see `memories`) beside the user's own, as one corpus, each marked `shared: true`; false leaves them out.
             * @default true
             */
            include_shared?: boolean;
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        RecallResult: {
            /** @description Best first. */
            results: components["schemas"]["RecallHit"][];
            /** @description Whether the best result's `relevance` reaches the deployment's `RECALL_MATCH_RELEVANCE` (default 0.05): false when nothing was found, or when what was found matches the query poorly, as for a question about nothing stored (the vectors always find some nearest text). The results are the same either way. Only agentmem's own results count (Mem0's carry no relevance). */
            matched: boolean;
        };
        /** @description A memory (`source` `memory`) or a message (`source` `message`) that recall found. */
        RecallHit: {
            id: components["schemas"]["UUID"];
            /** @description The memory, or the message's text. */
            content: string;
            /** @description Higher is better; its meaning depends on the mode (see `recall`). */
            score: number;
            /** @description How well the result matches the query, on a scale that depends neither on the mode nor on the other results: the greater of the share of the query's BM25 weight its text holds (its BM25 score over the highest any text could get for the query) and the cosine similarity of the vectors above the model's baseline, (similarity − baseline) / (1 − baseline), 0 at or below it (`RECALL_VECTOR_BASELINE`; 0.21 for the built-in embedder, else 0). Absent for a result of Mem0 (`origin`). */
            relevance?: number;
            /** @description The memory's or the message's metadata, `{}` when none. */
            metadata: Record<string, unknown>;
            created_at: components["schemas"]["Timestamp"];
            /** @enum {string} */
            source: "memory" | "message";
            /**
             * @description A shared memory of the user's tenant (see `memories`), ranked with the user's own; absent on the user's own memories and on messages.
             * @constant
             */
            shared?: true;
            /**
             * @description Absent for what agentmem stores. `mem0`: a memory of Mem0 merged in by `MEM0_RECALL` (`source` is `memory`); its `id` is Mem0's id (or, when that is no UUID, a UUID derived from it), its `metadata` Mem0's with `mem0_id` (Mem0's id as given), its `score` Mem0's, on a scale of its own. Read-only: the memories function does not know it.
             * @enum {string}
             */
            origin?: "mem0";
            /** @description A message's session; absent for a memory. */
            session_id?: components["schemas"]["UUID"];
            /** @description A message's place in its session; absent for a memory. */
            seq?: number;
            /**
             * @description A message's role; absent for a memory.
             * @enum {string}
             */
            role?: "user" | "assistant" | "system" | "tool";
            /** @description A message's speaker, when it was committed with a `name`; absent otherwise. */
            name?: string;
            /** @description With `neighbours`: the turns around a message result in its session, in seq order, without turns that are results or given beside a better result. Absent otherwise, and when there is no such turn. */
            context?: components["schemas"]["RecallTurn"][];
        };
        /** @description A message shown beside a recall result. */
        RecallTurn: {
            seq: number;
            /** @enum {string} */
            role: "user" | "assistant" | "system" | "tool";
            /** @description The speaker, when the message has a `name`. */
            name?: string;
            /** @description The message's text. */
            content: string;
            created_at: components["schemas"]["Timestamp"];
        };
        /** @description All fields optional; an empty body is `{}`. */
        SweepRequest: {
            /**
             * @description Count what is expired and delete nothing.
             * @default false
             */
            dry_run?: boolean;
            /**
             * @description Most rows one batch (one statement, one transaction) deletes.
             * @default 5000
             */
            batch_size?: number;
            /**
             * @description Time budget in milliseconds, further bounded by the request's deadline (see the operation).
             * @default 20000
             */
            max_duration_ms?: number;
        };
        SweepCounts: {
            messages: number;
            memories: number;
            sessions: number;
            idempotency_keys: number;
            /** @description Rate-limit counters whose bucket was full again (deleting one changes no limit). */
            request_rates: number;
            /** @description Expired messages of the history archive. */
            archived_messages?: number;
        };
        SweepResult: {
            deleted: components["schemas"]["SweepCounts"];
            /** @description Delete statements run (0 on a dry run). */
            batches: number;
            /** @description Time the sweep took, in milliseconds. */
            duration_ms: number;
            /** @description The time budget ran out before the sweep finished; expired rows may remain. */
            more: boolean;
            /**
             * @description Rows whose expiry came from an earlier `DEFAULT_RETENTION`, re-stamped to the time
             *     of their write plus the deployment's default (0 when it did not change, and on a dry run).
             */
            restamped?: {
                messages: number;
                archived_messages: number;
                memories: number;
                sessions: number;
            };
            /** @description What the history cap did (all 0 when it is off, and on a dry run). */
            capped?: {
                /** @description Sessions looked at and left within their cap. */
                sessions: number;
                /** @description Messages moved to the archive. */
                archived: number;
                /** @description Messages deleted past the cap (`HISTORY_OVERFLOW=delete`). */
                deleted: number;
            };
        };
        /**
         * @description 1 to 128 characters (code points), not only white space, without white space at either
         *     end, without control characters or U+2028 / U+2029. Compared exactly.
         */
        UserMemoryKey: string;
        /** @description A JSON object of at most 64 KiB (65,536 bytes once compacted). Stored as `jsonb`. */
        UserMemoryValue: {
            [key: string]: unknown;
        };
        UserMemorySetRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "set";
            key: components["schemas"]["UserMemoryKey"];
            value: components["schemas"]["UserMemoryValue"];
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        UserMemoryKeyRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "get" | "delete";
            key: components["schemas"]["UserMemoryKey"];
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        UserMemoryAllRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "list" | "clear";
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        UserMemoryItem: {
            key: string;
            /** @description The stored object, as `jsonb` gives it back (see the operation). */
            value: {
                [key: string]: unknown;
            };
            /** @description When the value was last set. */
            updated_at: components["schemas"]["Timestamp"];
        };
        UserMemorySetResult: {
            key: string;
            /** @description The object as stored, as `jsonb` gives it back. */
            value: {
                [key: string]: unknown;
            };
            updated_at: components["schemas"]["Timestamp"];
            /** @description Whether the key was new (answered with 201) rather than replaced (200). */
            created: boolean;
        };
        UserMemoryList: {
            /** @description Every key of the user, ordered by key bytewise; `[]` when none. */
            items: components["schemas"]["UserMemoryItem"][];
        };
        UserMemoryDeleted: {
            /** @description Keys removed: always 1 for `delete`, any number (0 included) for `clear`. */
            deleted: number;
        };
        /**
         * @description 1 to 64 characters (code points), not only white space, without white space at either
         *     end, without control characters or U+2028 / U+2029. Case-sensitive.
         * @example active
         * @example halted
         */
        UserStateMode: string;
        UserStateSetRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "set";
            mode: components["schemas"]["UserStateMode"];
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        UserStateOtherRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "get" | "delete";
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        UserState: {
            mode: string;
            /** @description When the mode was last set. */
            updated_at: components["schemas"]["Timestamp"];
        };
        UserStateSetResult: {
            mode: string;
            updated_at: components["schemas"]["Timestamp"];
            /** @description Whether the user had no mode before (answered with 201) rather than one replaced (200). */
            created: boolean;
        };
        /**
         * @description The section: its whole heading line (`"## Preferences"`, level and text must match) or
         *     the heading's text (`"Preferences"`, any level). One line of at most 512 characters,
         *     trimmed of surrounding white space; a heading line must have text (`"##"` is 400).
         * @example ## Preferences
         * @example Preferences
         */
        NotesSection: string;
        NotesPlainRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "read" | "clear";
            /** @default default */
            agent?: components["schemas"]["Agent"];
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        NotesWriteRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "overwrite" | "append" | "prepend";
            /** @default default */
            agent?: components["schemas"]["Agent"];
            /**
             * @description Markdown. `overwrite`: the whole new text, `""` allowed. `append`, `prepend`: must
             *     not be empty. Bounded by the size limit of the notes (see the operation).
             */
            content: string;
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        NotesReplaceSectionRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "replace_section";
            /** @default default */
            agent?: components["schemas"]["Agent"];
            section: components["schemas"]["NotesSection"];
            /**
             * @description The section's new body (`""` allowed), or, when it starts with a heading of the same
             *     or a higher level, its new heading and body.
             */
            content: string;
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        NotesDeleteSectionRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "delete_section";
            /** @default default */
            agent?: components["schemas"]["Agent"];
            section: components["schemas"]["NotesSection"];
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        /** @description The notes of (user, agent), after the edit for an edit. */
        NotesDocument: {
            agent: components["schemas"]["Agent"];
            /** @description The Markdown text; `""` when the agent has no notes for the user. */
            content: string;
            /** @description When the notes were last written; null when there are none. */
            updated_at: components["schemas"]["Timestamp"] | null;
            /** @description Length of `content` in characters (code points), the unit of `max_chars`. */
            chars: number;
            /** @description The size limit of the notes, `NOTES_MAX_CHARS` (default 20,000). */
            max_chars: number;
            /** @description `replace_section` only: true when the section did not exist and was appended at the end. */
            section_created?: boolean;
        };
        NotesCleared: {
            agent: components["schemas"]["Agent"];
            /** @description Whether there were notes to delete. */
            deleted: boolean;
        };
        /** @description `next_cursor` of the previous page, unchanged; absent or null for the first page. */
        Cursor: string | null;
        /**
         * @description How many items to skip, in the listing's order, instead of a cursor (with `cursor`:
         *     400). Slower than a cursor for deep pages: the skipped items are read.
         * @default 0
         */
        Offset: number;
        SessionsListRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "list";
            /** @description That agent's sessions only. Absent: every agent's. */
            agent?: components["schemas"]["Agent"];
            /** @default 20 */
            limit?: number;
            cursor?: components["schemas"]["Cursor"];
            offset?: components["schemas"]["Offset"];
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        SessionsHistoryRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "history";
            /** @description The session to page through. Absent or null: the user's messages across every session. */
            session_id?: components["schemas"]["UUID"] | null;
            /**
             * @description With `session_id`: the session must be this agent's (else 404). Without: only this
             *     agent's sessions' messages. Absent: any agent's.
             */
            agent?: components["schemas"]["Agent"];
            /**
             * @default newest
             * @enum {string}
             */
            order?: "newest" | "oldest";
            /** @default 50 */
            limit?: number;
            /** @description `next_cursor` of the previous page of this history (the same `session_id` or none, `agent`, `order` and `since`), unchanged; absent or null for the first page. */
            cursor?: components["schemas"]["Cursor"];
            offset?: components["schemas"]["Offset"];
            /**
             * @description Also page through (and count) the unexpired messages the history cap moved to the
             *     archive (`HISTORY_KEEP_MESSAGES`), in their place. Default: live messages only.
             * @default false
             */
            include_archived?: boolean;
            /**
             * Format: date-time
             * @description Only messages created at or after this RFC 3339 timestamp (with a time zone) are
             *     paged and counted. Malformed: 400 naming `since`. Absent or null: no bound.
             * @example 2026-11-19T09:00:00Z
             */
            since?: string | null;
            /**
             * @description `true` pages through and counts the answers alone, as get-context's `answers_only`
             *     keeps them: no tool messages, no tool calls on assistant messages, no assistant
             *     message without text.
             * @default false
             */
            answers_only?: boolean;
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        SessionsClearRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "clear";
            /** @description Only the messages of this agent's sessions. Absent: every agent's. */
            agent?: components["schemas"]["Agent"];
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        SessionsOneRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "reset" | "delete";
            session_id: components["schemas"]["UUID"];
            /** @description When given, the session must be this agent's (else 404). */
            agent?: components["schemas"]["Agent"];
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        SessionsDeleteMessageRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "delete_message";
            /**
             * @description The message's session. Absent or null: whichever of the caller's sessions holds a
             *     message of `message_id` (409 when several do).
             */
            session_id?: components["schemas"]["UUID"] | null;
            /** @description The message's `id`, as `history` or `commit-turn` answered it. */
            message_id: string;
            /** @description When given, the session must be this agent's (else 404). */
            agent?: components["schemas"]["Agent"];
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        SessionsSetTitleRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "set_title";
            session_id: components["schemas"]["UUID"];
            /**
             * @description Required. 1 to 200 characters (code points), not only white space, without control
             *     characters (U+0000 to U+001F, U+007F). `null` clears the title.
             */
            title: string | null;
            /** @description When given, the session must be this agent's (else 404). */
            agent?: components["schemas"]["Agent"];
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        SessionsSetMetadataRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "set_metadata";
            session_id: components["schemas"]["UUID"];
            /**
             * @description Required: the session's new metadata, replacing the old, a JSON object of at most
             *     16 KiB (compacted); `{}` clears it. Anything else (absent, null, another JSON type,
             *     larger) is 400 naming `metadata` and changes nothing.
             */
            metadata: Record<string, unknown>;
            /** @description When given, the session must be this agent's (else 404). */
            agent?: components["schemas"]["Agent"];
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        /** @description The answer of `set_metadata`. */
        SessionMetadata: {
            session_id: components["schemas"]["UUID"];
            metadata: components["schemas"]["SessionMetadataObject"];
        };
        SessionSummary: {
            session_id: components["schemas"]["UUID"];
            agent: components["schemas"]["Agent"];
            title: string | null;
            /** @description The session's unexpired live messages (not those the history cap archived). */
            message_count: number;
            created_at: components["schemas"]["Timestamp"];
            /** @description When the session was last resolved, activated or committed to. */
            last_active_at: components["schemas"]["Timestamp"];
            metadata: components["schemas"]["SessionMetadataObject"];
            last_synced_at: components["schemas"]["LastSyncedAt"];
        };
        SessionList: {
            sessions: components["schemas"]["SessionSummary"][];
            next_cursor: string | null;
        };
        SessionHistory: {
            messages: components["schemas"]["HistoryMessage"][];
            next_cursor: string | null;
            /**
             * @description The messages this history pages through when the page was read: the session's
             *     unexpired messages, or the user's (of `agent`) across sessions; created since
             *     `since` when given.
             */
            total: number;
        };
        /**
         * @description A message of `history`: a `RawMessage`, plus its `session_id` in the user's history
         *     across sessions (absent in a session's history, which names its session).
         */
        HistoryMessage: {
            /** @description The message's session; only in a history without `session_id`. */
            session_id?: components["schemas"]["UUID"];
            id: string;
            seq: number;
            /** @enum {string} */
            role: "user" | "assistant" | "system" | "tool";
            /** @description As committed, a string or content parts. */
            content: components["schemas"]["MessageContent"];
            name: string | null;
            /** @description null when the message has none. */
            tool_calls: components["schemas"]["ToolCall"][] | null;
            tool_call_id: string | null;
            /** @description `{}` when the message has none. */
            metadata: Record<string, unknown>;
            created_at: components["schemas"]["Timestamp"];
        };
        /** @description The answer of `reset` and `clear`. */
        SessionsResetResult: {
            /** @description Unexpired messages deleted. */
            deleted: number;
        };
        Deleted: {
            /** @constant */
            deleted: true;
        };
        SessionTitle: {
            session_id: components["schemas"]["UUID"];
            title: string | null;
        };
        MemoriesCreateRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "create";
            /** @description The fact, 1 to 20,000 characters (code points), not only white space. */
            content: string;
            /**
             * @description A JSON object of at most 16 KiB once compacted; merged into the metadata of the
             *     memory the fact merges into (its keys win). Absent or null: `{}`.
             */
            metadata?: {
                [key: string]: unknown;
            } | null;
            /** @description The agent whose memory this is; default `default`. */
            agent?: components["schemas"]["Agent"];
            /**
             * @description Lifetime of the memory in seconds (at most ten years); default the configured
             *     retention (`DEFAULT_RETENTION`). A merged memory keeps the later of its expiry and
             *     this one.
             */
            ttl_seconds?: number;
            /**
             * @description Service callers only (a user: 403): store a shared memory of the tenant (`tenant_id`, or none) instead of a user's, without `user_id`. Without `agent` it is every agent's.
             * @default false
             */
            shared?: boolean;
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        MemoryCreated: {
            /** @description The memory holding the fact. */
            id: components["schemas"]["UUID"];
            /**
             * @description true when the fact went into a memory the user already had (the same fact, or a
             *     near-duplicate); false when it made a new memory.
             */
            merged: boolean;
            /**
             * @description true when the merge gave the memory the fact's wording; false when the memory kept
             *     its own text, and for a new memory. A merge keeps the better-formed text: the same
             *     fact (differing in case, spacing or final punctuation) replaces the memory's text
             *     only when better formed (a capital first letter, a final `.`, `!` or `?`, not all in
             *     capitals), so "user lives in lisbon!" leaves "User lives in Lisbon." as it is, and
             *     of two as well formed the first stays; a near-duplicate's rephrasing replaces it
             *     unless less well formed, final punctuation aside.
             */
            content_changed: boolean;
        };
        MemoriesListRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "list";
            /** @description That agent's and agent-less memories. Absent: every agent's. */
            agent?: components["schemas"]["Agent"];
            /** @default 20 */
            limit?: number;
            cursor?: components["schemas"]["Cursor"];
            /**
             * @description List the tenant's shared memories instead of a user's, without `user_id`: a service caller's of `tenant_id` (or of no tenant), a user's of their own tenant.
             * @default false
             */
            shared?: boolean;
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        MemoriesOneRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "get" | "delete";
            id: components["schemas"]["UUID"];
            /**
             * @description `id` names a shared memory of the tenant, without `user_id`. `delete`: service callers only (a user: 403). Without it, a user's `get` also finds a shared memory of their tenant, and a user's `delete` of one is 403.
             * @default false
             */
            shared?: boolean;
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        /** @description At least one of `content` and `metadata`. */
        MemoriesUpdateRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "update";
            id: components["schemas"]["UUID"];
            /**
             * @description The new text, 1 to 20,000 characters (code points), not only white space. Embedded
             *     again; the same fact as another unexpired memory of the same user and agent is 409.
             */
            content?: string;
            /**
             * @description Replaces the stored metadata as a whole (not merged); at most 16 KiB (16,384 bytes
             *     once compacted); `{}` empties it; `null` is refused (400).
             */
            metadata?: {
                [key: string]: unknown;
            };
            /**
             * @description Service callers only (a user: 403): `id` names a shared memory of the tenant (`tenant_id`, or none), without `user_id`.
             * @default false
             */
            shared?: boolean;
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        MemoryItem: {
            id: components["schemas"]["UUID"];
            content: string;
            metadata: {
                [key: string]: unknown;
            };
            /** @description null for a memory every agent of the user recalls. */
            agent: string | null;
            created_at: components["schemas"]["Timestamp"];
            updated_at: components["schemas"]["Timestamp"];
            expires_at: components["schemas"]["Timestamp"];
            /**
             * @description A shared memory of the tenant, which belongs to no user; absent on a user's own.
             * @constant
             */
            shared?: true;
        };
        MemoryList: {
            items: components["schemas"]["MemoryItem"][];
            next_cursor: string | null;
        };
        /**
         * @description The document's name within the tenant's knowledge base, chosen by the caller (a path, a
         *     URL...): 1 to 512 characters (code points), not only white space, without control
         *     characters (U+0000 to U+001F, U+007F). Compared exactly.
         */
        KnowledgeSource: string;
        /**
         * @description The tenant whose knowledge base to use. Service callers: optional, default `""` (the
         *     tenant-less knowledge base). Users: only their token's tenant (403 otherwise).
         */
        KnowledgeTenantID: components["schemas"]["TenantID"];
        KnowledgeIngestRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "ingest";
            tenant_id?: components["schemas"]["KnowledgeTenantID"];
            source: components["schemas"]["KnowledgeSource"];
            /**
             * @description The document, as text (Markdown or plain); not empty nor only white space. Its size
             *     is bounded by the 1 MiB body.
             */
            content: string;
            /** @description Stored with every chunk and answered with each hit; at most 16 KiB once compacted. Absent or null means `{}`. */
            metadata?: components["schemas"]["Metadata"];
        };
        KnowledgeSearchRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "search";
            tenant_id?: components["schemas"]["KnowledgeTenantID"];
            /** @description 1 to 4,096 characters (code points). */
            query: string;
            /** @default 10 */
            k?: number;
            /**
             * @default hybrid
             * @enum {string}
             */
            mode?: "hybrid" | "vector" | "text";
        };
        KnowledgeDeleteRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "delete";
            tenant_id?: components["schemas"]["KnowledgeTenantID"];
            source: components["schemas"]["KnowledgeSource"];
        };
        KnowledgeIngested: {
            source: string;
            tenant_id: string;
            /** @description Chunks the source has now. */
            chunks: number;
            /** @description Chunks of an earlier ingest of the source that were removed (0 for a new source). */
            replaced: number;
        };
        KnowledgeHit: {
            id: components["schemas"]["UUID"];
            source: string;
            /** @description Position of the chunk in its source, from 0. */
            chunk_index: number;
            content: string;
            /** @description As `recall`'s score for the mode, higher is better; in `vector` mode 0 where the cosine is undefined (a chunk or query without a single word). */
            score: number;
            /** @description The ingest's metadata (`{}` when none). */
            metadata: {
                [key: string]: unknown;
            };
        };
        KnowledgeSearchResult: {
            /** @description Best first, at most `k`. */
            results: components["schemas"]["KnowledgeHit"][];
        };
        KnowledgeDeleted: {
            source: string;
            tenant_id: string;
            deleted: number;
        };
        /** @description All fields optional for a user caller (an empty body is `{}`); a service caller must give `user_id`. */
        ForgetUserRequest: {
            /**
             * @description The user to erase. Required for service callers (not the nil UUID). A user caller may
             *     give only their own id; another answers 403.
             */
            user_id?: components["schemas"]["UserID"];
            /**
             * @description Service callers: erase only this tenant's rows (`""`: the tenant-less scope); absent:
             *     every tenant. Users: only their token's tenant (403 otherwise).
             */
            tenant_id?: components["schemas"]["TenantID"];
        };
        ForgetUserResult: {
            /** @description The user erased (see UserID). */
            user_id: string;
            /** @description The tenant erased; null when every tenant was. */
            tenant_id: string | null;
            /**
             * @description Rows deleted per table, for every table with user rows (zeros included), keyed by table name.
             * @example {
             *       "active_sessions": 1,
             *       "idempotency_keys": 1,
             *       "jobs": 2,
             *       "memories": 3,
             *       "messages": 12,
             *       "notes": 1,
             *       "request_rates": 1,
             *       "sessions": 2,
             *       "user_memory": 4,
             *       "user_state": 1
             *     }
             */
            deleted: {
                [key: string]: number;
            };
        };
        IntentRequest: {
            /** @enum {string} */
            type: "syncSession" | "backfillSession";
            session_id: components["schemas"]["UUID"];
            user_id?: components["schemas"]["UserID"];
            tenant_id?: components["schemas"]["TenantID"];
        };
        JobRef: {
            id: components["schemas"]["UUID"];
            /** @description The adapter's name in `ADAPTERS` (`webhook`, `mem0`). */
            adapter: string;
            /** @enum {string} */
            status: "pending";
        };
        IntentResult: {
            /**
             * @description The event id every job of the intent delivers under (a backfill's pages derive theirs
             *     from it); when `coalesced`, the earlier request's.
             */
            intent_id: components["schemas"]["UUID"];
            /** @enum {string} */
            type: "syncSession" | "backfillSession";
            session_id: components["schemas"]["UUID"];
            /** @description One job per enabled adapter; empty when none is enabled. */
            jobs: components["schemas"]["JobRef"][];
            /**
             * @description `true` for a backfill that wrote no job: every adapter's backfill of the session was
             *     still pending from an earlier request, and those jobs answer for this one. Always
             *     `false` for `syncSession`.
             */
            coalesced: boolean;
        };
        /**
         * @description `pending`: waits for `next_attempt_at`. `running`: claimed by a delivery until
         *     `next_attempt_at` (its lease), after which it is claimed again. `done`: delivered.
         *     `dead`: failed `JOBS_MAX_ATTEMPTS` times (`retry` revives it).
         * @enum {string}
         */
        JobStatus: "pending" | "running" | "done" | "dead";
        Job: {
            id: components["schemas"]["UUID"];
            /**
             * @description The change the job delivers: `onTurnCommitted`, `onMemoryCreated` (memories
             *     `create` of a new fact), `onMemoryUpdated` (also a `create` merged into a memory),
             *     `onMemoryDeleted`, `onMessageDeleted`, `onMessagesCleared` (sessions `clear`),
             *     `onSessionReset`, `onSessionDeleted`, `onUserForgotten`, `onSummaryUpdated` (a
             *     session's rolling summary advanced: what `get-context` answers for it changed),
             *     `syncSession` or `backfillSession`.
             */
            intent: string;
            /**
             * @description The adapter that delivers it (`webhook`), or the internal work it is: `extract`
             *     (fact extraction of a committed turn) or `summarize` (a session's rolling summary).
             */
            adapter: string;
            status: components["schemas"]["JobStatus"];
            /** @description Deliveries started (claims), counted afresh by `retry`. */
            attempts: number;
            /** @description `pending`: when it is due. `running`: when its lease ends. `done`, `dead`: when it got there. */
            next_attempt_at: components["schemas"]["Timestamp"];
            /** @description The last failure (a status, a network error), at most 500 characters; never content. Null when none. */
            last_error: string | null;
            created_at: components["schemas"]["Timestamp"];
            updated_at: components["schemas"]["Timestamp"];
            /**
             * Format: uuid
             * @description The session of the change; null for a change of memories or of the user.
             */
            session_id: string | null;
            /** @description The user the job is for (see UserID). */
            user_id: string;
        };
        JobsListRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "list";
            status?: components["schemas"]["JobStatus"];
            /**
             * @description An adapter's name, or the internal work that rides the outbox: `extract` (fact
             *     extraction) and `summarize` (rolling summaries).
             * @enum {string}
             */
            adapter?: "webhook" | "mem0" | "extract" | "summarize";
            /** @default 50 */
            limit?: number;
            cursor?: components["schemas"]["Cursor"];
        };
        JobsOneRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "get" | "retry";
            id: components["schemas"]["UUID"];
        };
        JobsPurgeRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            op: "purge";
            /** @enum {string} */
            status: "done" | "dead";
            /** @default 0 */
            older_than_seconds?: number;
        };
        JobList: {
            jobs: components["schemas"]["Job"][];
            /** @description Pass it as `cursor` for the next page; null on the last page. */
            next_cursor: string | null;
        };
        JobsPurged: {
            deleted: number;
        };
        /** @description All fields optional; an empty body is `{}`. */
        ProcessJobsRequest: {
            /**
             * @description Time budget in milliseconds, further bounded by the request's deadline.
             * @default 20000
             */
            max_duration_ms?: number;
            /**
             * @description Most jobs to handle.
             * @default 1000
             */
            limit?: number;
        };
        ProcessJobsResult: {
            /** @description Jobs handled (delivered or not). */
            processed: number;
            /** @description Delivered. */
            done: number;
            /** @description Failed, pending again after a backoff. */
            retried: number;
            /** @description Failed at the attempt cap (or their last lease passed). */
            dead: number;
            /** @description Due jobs remain (the limit or the time budget was reached). */
            more: boolean;
        };
        /**
         * @description What an adapter receives for a job: the body of the webhook adapter's POST. It is read
         *     when the job is delivered, so its content is what the database holds then (a message
         *     deleted meanwhile is no longer in it), and it has passed through PII redaction whole:
         *     every string, member name and number at any depth (content and content parts of any
         *     type, URLs, file names, names, tool calls, metadata names and values, memories, the
         *     session's title, the tenant and the agent) but agentmem's own ids, timestamps, seqs,
         *     counts, the event's type and messages' roles. Emails, phone numbers, card numbers, IBANs
         *     and IP addresses are `[EMAIL]`, `[PHONE]`, `[CARD]`, `[IBAN]` and `[IP]`; in `tenant_id`,
         *     `agent` and tool call ids they are followed by `#` and 16 hex digits of a keyed hash of
         *     the name, so two names stay two. Inline data (`data:` URLs, the `data` and `file_data`
         *     of content parts, base64 runs of 256 characters or more) is `[DATA <media type> <size>
         *     bytes]`. `pii_scrubbed` is true, and `metadata.pii` lists the kind and salted hash of
         *     each value removed (`hex(HMAC-SHA256(PII_HASH_SALT, "kind:" + canonical value))`), in
         *     order. A direct delivery carries `webhook-id` (the event id),
         *     `webhook-timestamp` and `webhook-signature` (`v1,` and base64 of HMAC-SHA256 with the
         *     secret of `<id>.<timestamp>.<body>`), as Standard Webhooks prescribe, and
         *     `Agentmem-Event-Type`; one through QStash carries QStash's `Upstash-Signature` and the
         *     forwarded `Webhook-Id` and `Agentmem-Event-Type`. The same event may arrive more than
         *     once (a retry after a lost acknowledgement): drop the ids you already have.
         * @example {
         *       "id": "5b7c9d1e-3f2a-4b6c-8d0e-1f2a3b4c5d6e",
         *       "type": "onTurnCommitted",
         *       "occurred_at": "2026-11-24T07:41:02.120391Z",
         *       "tenant_id": "acme",
         *       "user_id": "3f1c2a9e-8b7d-4c6e-9f10-2a3b4c5d6e7f",
         *       "agent": "support-bot",
         *       "session_id": "7d0c4f3e-2b1a-4c5d-8e9f-0a1b2c3d4e5f",
         *       "seq_from": 13,
         *       "seq_to": 14,
         *       "messages": [
         *         {
         *           "id": "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
         *           "seq": 13,
         *           "role": "user",
         *           "content": "I prefer metric units; mail me at [EMAIL].",
         *           "name": null,
         *           "tool_calls": null,
         *           "tool_call_id": null,
         *           "metadata": {},
         *           "created_at": "2026-11-24T07:41:02.120391Z"
         *         },
         *         {
         *           "id": "2d3e4f5a-6b7c-4d8e-9f0a-1b2c3d4e5f6a",
         *           "seq": 14,
         *           "role": "assistant",
         *           "content": "Noted.",
         *           "name": null,
         *           "tool_calls": null,
         *           "tool_call_id": null,
         *           "metadata": {},
         *           "created_at": "2026-11-24T07:41:02.120391Z"
         *         }
         *       ],
         *       "memories": [
         *         {
         *           "id": "0b6e9e52-9d0c-4c61-9a51-5b3c1b2e8f10",
         *           "content": "User prefers metric units.",
         *           "metadata": {},
         *           "agent": "support-bot",
         *           "created_at": "2026-11-24T07:41:02.120391Z",
         *           "updated_at": "2026-11-24T07:41:02.120391Z",
         *           "expires_at": "2026-12-24T07:41:02.120391Z"
         *         }
         *       ],
         *       "removed": null,
         *       "session": null,
         *       "page": null,
         *       "pii_scrubbed": true,
         *       "metadata": {
         *         "pii": [
         *           {
         *             "kind": "email",
         *             "hash": "9c1f0e6b54a8d2f37e1b0c5a9d84e7f26b3a1c0d5e8f7a6b4c3d2e1f0a9b8c7d"
         *           }
         *         ]
         *       }
         *     }
         */
        Event: {
            /** @description The change's id, the same on every delivery of it (and to every adapter). */
            id: components["schemas"]["UUID"];
            /** @description The job's intent (see `Job`). */
            type: string;
            occurred_at: components["schemas"]["Timestamp"];
            /** @description Null for an erasure of the user in every tenant. */
            tenant_id: string | null;
            /** @description The user's id; `""` for a change of the tenant's shared memories (`shared`). */
            user_id: string;
            /**
             * @description A change of the tenant's shared memories (see `memories`), which belong to no user; absent for every other change.
             * @constant
             */
            shared?: true;
            /** @description Null for a change of the user as a whole, or a memory every agent recalls. */
            agent: string | null;
            /** Format: uuid */
            session_id: string | null;
            /** @description First seq the change is about (a turn, a backfill page, a deleted message). */
            seq_from: number | null;
            /** @description Last seq the change is about; for `onSessionReset`, every message up to it went. */
            seq_to: number | null;
            messages: components["schemas"]["RawMessage"][];
            memories: components["schemas"]["MemoryItem"][];
            removed: null | {
                message_ids: string[];
                memory_ids: components["schemas"]["UUID"][];
                all_messages: boolean;
                session: boolean;
                user: boolean;
            };
            session: null | {
                id: components["schemas"]["UUID"];
                agent: string;
                title: string | null;
                last_seq: number;
                message_count: number;
                created_at: components["schemas"]["Timestamp"];
                last_active_at: components["schemas"]["Timestamp"];
                expires_at: components["schemas"]["Timestamp"];
            };
            page: null | {
                number: number;
                of: number;
            };
            /** @description The whole event went through PII redaction (see `Event`). */
            pii_scrubbed: boolean;
            /** @description What the pipeline adds. `pii`, when redaction removed something, lists `{kind, hash}` of each value removed, in order. */
            metadata: {
                [key: string]: unknown;
            };
        };
    };
    responses: {
        /**
         * @description `invalid_request`: malformed JSON, a body that is not one JSON object, a wrong type, an
         *     unknown field, a value out of range, a missing required field, invalid UTF-8, a NUL
         *     character, or an invalid `Idempotency-Key`. `errors` lists every invalid field found.
         *     Nothing was written.
         */
        BadRequest: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description `unauthenticated`: no valid bearer token. Checked before anything else. */
        Unauthenticated: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /**
         * @description `forbidden`: a user token naming a `user_id` or `tenant_id` other than its own, or an
         *     anonymous user's token when `AUTH_ALLOW_ANONYMOUS=false`.
         */
        ForbiddenActingFor: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /**
         * @description `forbidden`: a user token naming a `user_id` or `tenant_id` other than its own, an
         *     anonymous user's token when `AUTH_ALLOW_ANONYMOUS=false`, or a write of a shared memory
         *     by a user (`create`, `update` or `delete` with `shared: true`, or `update` or `delete`
         *     of a shared memory of their tenant; also for a service caller acting for a user). Nothing
         *     changes.
         */
        ForbiddenMemories: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description `forbidden`: a user token (anonymous or not); this function is for service callers only. */
        ForbiddenServiceOnly: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /**
         * @description `not_found`: the session does not exist for this caller. Another user's session looks
         *     exactly like a missing one.
         */
        NotFound: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description `method_not_allowed`: any method other than POST or OPTIONS (after authentication). */
        MethodNotAllowed: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                Allow: components["headers"]["Allow"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /**
         * @description `conflict` (`delete_message` without `session_id` only): several of the caller's sessions
         *     hold a message of that `id` (a client's id is unique within its session only). Nothing
         *     was deleted; the problem names no session. Give `session_id`.
         */
        AmbiguousMessageID: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description `conflict`: the Idempotency-Key was already used, within its scope and window, with a different body. */
        Conflict: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description `payload_too_large`: the body is over 1 MiB (1,048,576 bytes). */
        PayloadTooLarge: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /**
         * @description `request_header_fields_too_large`: the request line and headers are over 64 KiB
         *     (65,536 bytes, names, values and separators counted). Checked before anything else,
         *     authentication included; the answer carries `X-Request-Id` and, for an allowed origin,
         *     the CORS headers, like every other.
         */
        HeadersTooLarge: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description `unsupported_media_type`: a non-empty body without `Content-Type: application/json` (or another `application/*+json`). */
        UnsupportedMediaType: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /**
         * @description `rate_limited`: the user (of the token, or named by a service caller's `user_id`) or
         *     their tenant has made more requests than `RATE_LIMIT_USER_PER_MINUTE` or
         *     `RATE_LIMIT_TENANT_PER_MINUTE` allow (both off by default). Nothing was done or
         *     written; `detail` says which limit, and `Retry-After` the seconds until a request of
         *     this user is let through again.
         */
        RateLimited: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                "Retry-After": components["headers"]["Retry-After"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /**
         * @description `unavailable`: the database is unreachable or busy, the pool is exhausted, or the
         *     deadline was hit. Nothing was written; retry after `Retry-After` seconds (with the same
         *     `Idempotency-Key`, when one was sent).
         */
        Unavailable: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                "Retry-After": components["headers"]["Retry-After"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description `internal`: a bug. `detail` is generic; the cause is logged under the request id. Nothing was written. */
        Internal: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /**
         * @description CORS preflight, answered without authentication. For an allowed origin it carries the
         *     CORS headers below; for any other origin (or none) only `Allow` and `X-Request-Id`.
         */
        Preflight: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                Allow: components["headers"]["Allow"];
                "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                "Access-Control-Allow-Methods": components["headers"]["Access-Control-Allow-Methods"];
                "Access-Control-Allow-Headers": components["headers"]["Access-Control-Allow-Headers"];
                "Access-Control-Max-Age": components["headers"]["Access-Control-Max-Age"];
                [name: string]: unknown;
            };
            content?: never;
        };
        /**
         * @description `not_found`: the memory does not exist for this caller (missing, expired, another
         *     user's or tenant's, indistinguishably).
         */
        MemoryNotFound: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /**
         * @description `conflict`. `update`: the new content is the same fact as another unexpired memory of
         *     the same user and agent; `detail` names that memory's id (unless a concurrent request
         *     stored the fact meanwhile). `create`: the Idempotency-Key was used with a different
         *     request (or an identical one is still in flight). Nothing changed.
         */
        SameFactConflict: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /**
         * @description `not_found`: the session does not exist for this caller (missing, expired, another
         *     user's or tenant's, or another agent's when `agent` is given, indistinguishably); for
         *     `delete_message`, also a message that is not an unexpired message of the session (or,
         *     without `session_id`, of any of the caller's sessions).
         */
        SessionsNotFound: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description `not_found`: `get` or `delete` of a key the user has not set. */
        UserMemoryKeyNotFound: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description `not_found`: `get` or `delete` when the user has no mode. */
        UserStateNotFound: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /**
         * @description `not_found`: `delete_section` of a section the notes do not have (also when there
         *     are no notes). Nothing changed.
         */
        NotesSectionNotFound: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description `not_found`: `delete` of a source the tenant's knowledge base does not have. */
        KnowledgeSourceNotFound: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /**
         * @description `forbidden`: a user token calling `ingest` or `delete` (service callers only), or
         *     naming a `tenant_id` other than its own, or an anonymous user's token when
         *     `AUTH_ALLOW_ANONYMOUS=false`.
         */
        KnowledgeForbidden: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description `not_found`: `get` or `retry` of a job that does not exist. */
        JobNotFound: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description `conflict`: `retry` of a job that is not `dead`; `detail` names its status. Nothing changed. */
        JobNotDead: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
    };
    parameters: {
        /**
         * @description Makes a retry safe: see the idempotency rules of `commit-turn`. 1 to 255 printable ASCII
         *     characters (U+0020 to U+007E). An empty or otherwise invalid value answers 400 with field
         *     `Idempotency-Key`.
         */
        IdempotencyKey: string;
        /** @description The browser origin asking; CORS headers are answered only for allowed origins. */
        Origin: string;
        /**
         * @description The greatest `Agentmem-Position` an earlier answer gave this client: the reads of this
         *     request see at least the writes up to it (see "Read replicas and positions"). A value
         *     that is not 16 hexadecimal digits, or more than one value, answers 400 with field
         *     `Agentmem-Position`.
         */
        PositionIn: string;
        /**
         * @description The client's id for this request, echoed in the `X-Request-Id` answer header and
         *     `request_id` of problem bodies when it is 1 to 128 printable ASCII characters; otherwise
         *     a UUID is generated.
         */
        XRequestIdIn: string;
    };
    requestBodies: never;
    headers: {
        /**
         * @description The primary's write-ahead log position after this request's writes: on answers to
         *     requests that wrote (and to some reads answered by the primary), when the deployment
         *     has read replicas; never otherwise.
         *     Opaque: 16 upper-case hexadecimal digits, which compare as strings; send the greatest
         *     received back in `Agentmem-Position` to read these writes from a replica.
         */
        "Agentmem-Position": string;
        /** @description The request id (echoed from the request when acceptable, else generated); also in the log. */
        "X-Request-Id": string;
        /** @description `true` when this answer replays the recorded answer of an earlier request with the same Idempotency-Key; absent otherwise. */
        "Idempotent-Replayed": "true";
        /** @description Seconds to wait before retrying (at least 1). */
        "Retry-After": number;
        /** @description Always `Bearer realm="agentmem"`. */
        "WWW-Authenticate": string;
        /** @description Always `POST, OPTIONS`. */
        Allow: string;
        /** @description `*`, or the request's Origin when it is among the configured origins; absent for other origins. */
        "Access-Control-Allow-Origin": string;
        /** @description Always `POST, OPTIONS` (allowed origins only). */
        "Access-Control-Allow-Methods": string;
        /** @description Always `Authorization, Content-Type, Idempotency-Key, X-Request-Id, Mcp-Protocol-Version, Agentmem-Position` (allowed origins only). */
        "Access-Control-Allow-Headers": string;
        /** @description Always `600` (allowed origins only). */
        "Access-Control-Max-Age": number;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    activeSession: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The client's id for this request, echoed in the `X-Request-Id` answer header and
                 *     `request_id` of problem bodies when it is 1 to 128 printable ASCII characters; otherwise
                 *     a UUID is generated.
                 */
                "X-Request-Id"?: components["parameters"]["XRequestIdIn"];
                /**
                 * @description The greatest `Agentmem-Position` an earlier answer gave this client: the reads of this
                 *     request see at least the writes up to it (see "Read replicas and positions"). A value
                 *     that is not 16 hexadecimal digits, or more than one value, answers 400 with field
                 *     `Agentmem-Position`.
                 */
                "Agentmem-Position"?: components["parameters"]["PositionIn"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["ActiveSessionRequest"];
            };
        };
        responses: {
            /** @description The active session already existed (resolve), or an existing session was activated. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActiveSession"];
                };
            };
            /** @description A session was created (resolve with none active, activate of an unused id, or new). */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActiveSession"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["ForbiddenActingFor"];
            404: components["responses"]["NotFound"];
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    activeSessionPreflight: {
        parameters: {
            query?: never;
            header?: {
                /** @description The browser origin asking; CORS headers are answered only for allowed origins. */
                Origin?: components["parameters"]["Origin"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: components["responses"]["Preflight"];
        };
    };
    commitTurn: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description Makes a retry safe: see the idempotency rules of `commit-turn`. 1 to 255 printable ASCII
                 *     characters (U+0020 to U+007E). An empty or otherwise invalid value answers 400 with field
                 *     `Idempotency-Key`.
                 */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
                /**
                 * @description The client's id for this request, echoed in the `X-Request-Id` answer header and
                 *     `request_id` of problem bodies when it is 1 to 128 printable ASCII characters; otherwise
                 *     a UUID is generated.
                 */
                "X-Request-Id"?: components["parameters"]["XRequestIdIn"];
                /**
                 * @description The greatest `Agentmem-Position` an earlier answer gave this client: the reads of this
                 *     request see at least the writes up to it (see "Read replicas and positions"). A value
                 *     that is not 16 hexadecimal digits, or more than one value, answers 400 with field
                 *     `Agentmem-Position`.
                 */
                "Agentmem-Position"?: components["parameters"]["PositionIn"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CommitTurnRequest"];
            };
        };
        responses: {
            /**
             * @description The turn was stored, or (with header `Idempotent-Replayed: true`) the recorded answer
             *     of an earlier identical request is replayed and nothing new was stored. Also 201 when
             *     every message was already stored under its client id.
             */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "Agentmem-Position": components["headers"]["Agentmem-Position"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CommitResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["ForbiddenActingFor"];
            404: components["responses"]["NotFound"];
            405: components["responses"]["MethodNotAllowed"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    commitTurnPreflight: {
        parameters: {
            query?: never;
            header?: {
                /** @description The browser origin asking; CORS headers are answered only for allowed origins. */
                Origin?: components["parameters"]["Origin"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: components["responses"]["Preflight"];
        };
    };
    getContext: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The client's id for this request, echoed in the `X-Request-Id` answer header and
                 *     `request_id` of problem bodies when it is 1 to 128 printable ASCII characters; otherwise
                 *     a UUID is generated.
                 */
                "X-Request-Id"?: components["parameters"]["XRequestIdIn"];
                /**
                 * @description The greatest `Agentmem-Position` an earlier answer gave this client: the reads of this
                 *     request see at least the writes up to it (see "Read replicas and positions"). A value
                 *     that is not 16 hexadecimal digits, or more than one value, answers 400 with field
                 *     `Agentmem-Position`.
                 */
                "Agentmem-Position"?: components["parameters"]["PositionIn"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["GetContextRequest"];
            };
        };
        responses: {
            /** @description The context. The shape of `messages` depends on `format`. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ContextRaw"] | components["schemas"]["ContextOpenAI"] | components["schemas"]["ContextLangChain"] | components["schemas"]["ContextAnthropic"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["ForbiddenActingFor"];
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    getContextPreflight: {
        parameters: {
            query?: never;
            header?: {
                /** @description The browser origin asking; CORS headers are answered only for allowed origins. */
                Origin?: components["parameters"]["Origin"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: components["responses"]["Preflight"];
        };
    };
    recall: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The client's id for this request, echoed in the `X-Request-Id` answer header and
                 *     `request_id` of problem bodies when it is 1 to 128 printable ASCII characters; otherwise
                 *     a UUID is generated.
                 */
                "X-Request-Id"?: components["parameters"]["XRequestIdIn"];
                /**
                 * @description The greatest `Agentmem-Position` an earlier answer gave this client: the reads of this
                 *     request see at least the writes up to it (see "Read replicas and positions"). A value
                 *     that is not 16 hexadecimal digits, or more than one value, answers 400 with field
                 *     `Agentmem-Position`.
                 */
                "Agentmem-Position"?: components["parameters"]["PositionIn"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RecallRequest"];
            };
        };
        responses: {
            /** @description The matching memories (and, with `source`, messages), best first, at most `k`. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecallResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["ForbiddenActingFor"];
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    recallPreflight: {
        parameters: {
            query?: never;
            header?: {
                /** @description The browser origin asking; CORS headers are answered only for allowed origins. */
                Origin?: components["parameters"]["Origin"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: components["responses"]["Preflight"];
        };
    };
    sweepExpired: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The client's id for this request, echoed in the `X-Request-Id` answer header and
                 *     `request_id` of problem bodies when it is 1 to 128 printable ASCII characters; otherwise
                 *     a UUID is generated.
                 */
                "X-Request-Id"?: components["parameters"]["XRequestIdIn"];
                /**
                 * @description The greatest `Agentmem-Position` an earlier answer gave this client: the reads of this
                 *     request see at least the writes up to it (see "Read replicas and positions"). A value
                 *     that is not 16 hexadecimal digits, or more than one value, answers 400 with field
                 *     `Agentmem-Position`.
                 */
                "Agentmem-Position"?: components["parameters"]["PositionIn"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                /**
                 * @example {
                 *       "dry_run": false,
                 *       "batch_size": 5000,
                 *       "max_duration_ms": 20000
                 *     }
                 */
                "application/json": components["schemas"]["SweepRequest"];
            };
        };
        responses: {
            /** @description What was deleted (or, with `dry_run`, would be). */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SweepResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["ForbiddenServiceOnly"];
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    sweepExpiredPreflight: {
        parameters: {
            query?: never;
            header?: {
                /** @description The browser origin asking; CORS headers are answered only for allowed origins. */
                Origin?: components["parameters"]["Origin"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: components["responses"]["Preflight"];
        };
    };
    userMemory: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The client's id for this request, echoed in the `X-Request-Id` answer header and
                 *     `request_id` of problem bodies when it is 1 to 128 printable ASCII characters; otherwise
                 *     a UUID is generated.
                 */
                "X-Request-Id"?: components["parameters"]["XRequestIdIn"];
                /**
                 * @description The greatest `Agentmem-Position` an earlier answer gave this client: the reads of this
                 *     request see at least the writes up to it (see "Read replicas and positions"). A value
                 *     that is not 16 hexadecimal digits, or more than one value, answers 400 with field
                 *     `Agentmem-Position`.
                 */
                "Agentmem-Position"?: components["parameters"]["PositionIn"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["UserMemorySetRequest"] | components["schemas"]["UserMemoryKeyRequest"] | components["schemas"]["UserMemoryAllRequest"];
            };
        };
        responses: {
            /**
             * @description `set` of a key that was set: `UserMemorySetResult` with `created: false`. `get`:
             *     `UserMemoryItem`. `list`: `UserMemoryList`. `delete` and `clear`:
             *     `UserMemoryDeleted`.
             */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UserMemorySetResult"] | components["schemas"]["UserMemoryItem"] | components["schemas"]["UserMemoryList"] | components["schemas"]["UserMemoryDeleted"];
                };
            };
            /** @description `set` of a key that was not set: `created: true`. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UserMemorySetResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["ForbiddenActingFor"];
            404: components["responses"]["UserMemoryKeyNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    userMemoryPreflight: {
        parameters: {
            query?: never;
            header?: {
                /** @description The browser origin asking; CORS headers are answered only for allowed origins. */
                Origin?: components["parameters"]["Origin"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: components["responses"]["Preflight"];
        };
    };
    userState: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The client's id for this request, echoed in the `X-Request-Id` answer header and
                 *     `request_id` of problem bodies when it is 1 to 128 printable ASCII characters; otherwise
                 *     a UUID is generated.
                 */
                "X-Request-Id"?: components["parameters"]["XRequestIdIn"];
                /**
                 * @description The greatest `Agentmem-Position` an earlier answer gave this client: the reads of this
                 *     request see at least the writes up to it (see "Read replicas and positions"). A value
                 *     that is not 16 hexadecimal digits, or more than one value, answers 400 with field
                 *     `Agentmem-Position`.
                 */
                "Agentmem-Position"?: components["parameters"]["PositionIn"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["UserStateSetRequest"] | components["schemas"]["UserStateOtherRequest"];
            };
        };
        responses: {
            /**
             * @description `set` replacing a mode: `UserStateSetResult` with `created: false`. `get`:
             *     `UserState`. `delete`: `Deleted`.
             */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UserStateSetResult"] | components["schemas"]["UserState"] | components["schemas"]["Deleted"];
                };
            };
            /** @description `set` when the user had no mode: `created: true`. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UserStateSetResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["ForbiddenActingFor"];
            404: components["responses"]["UserStateNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    userStatePreflight: {
        parameters: {
            query?: never;
            header?: {
                /** @description The browser origin asking; CORS headers are answered only for allowed origins. */
                Origin?: components["parameters"]["Origin"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: components["responses"]["Preflight"];
        };
    };
    notes: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The client's id for this request, echoed in the `X-Request-Id` answer header and
                 *     `request_id` of problem bodies when it is 1 to 128 printable ASCII characters; otherwise
                 *     a UUID is generated.
                 */
                "X-Request-Id"?: components["parameters"]["XRequestIdIn"];
                /**
                 * @description The greatest `Agentmem-Position` an earlier answer gave this client: the reads of this
                 *     request see at least the writes up to it (see "Read replicas and positions"). A value
                 *     that is not 16 hexadecimal digits, or more than one value, answers 400 with field
                 *     `Agentmem-Position`.
                 */
                "Agentmem-Position"?: components["parameters"]["PositionIn"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NotesPlainRequest"] | components["schemas"]["NotesWriteRequest"] | components["schemas"]["NotesReplaceSectionRequest"] | components["schemas"]["NotesDeleteSectionRequest"];
            };
        };
        responses: {
            /**
             * @description `read`, and an edit of notes that existed: `NotesDocument`. `clear`:
             *     `NotesCleared`.
             */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NotesDocument"] | components["schemas"]["NotesCleared"];
                };
            };
            /** @description An edit that created the notes (the agent had none for the user before). */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NotesDocument"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["ForbiddenActingFor"];
            404: components["responses"]["NotesSectionNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    notesPreflight: {
        parameters: {
            query?: never;
            header?: {
                /** @description The browser origin asking; CORS headers are answered only for allowed origins. */
                Origin?: components["parameters"]["Origin"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: components["responses"]["Preflight"];
        };
    };
    sessions: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The client's id for this request, echoed in the `X-Request-Id` answer header and
                 *     `request_id` of problem bodies when it is 1 to 128 printable ASCII characters; otherwise
                 *     a UUID is generated.
                 */
                "X-Request-Id"?: components["parameters"]["XRequestIdIn"];
                /**
                 * @description The greatest `Agentmem-Position` an earlier answer gave this client: the reads of this
                 *     request see at least the writes up to it (see "Read replicas and positions"). A value
                 *     that is not 16 hexadecimal digits, or more than one value, answers 400 with field
                 *     `Agentmem-Position`.
                 */
                "Agentmem-Position"?: components["parameters"]["PositionIn"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SessionsListRequest"] | components["schemas"]["SessionsHistoryRequest"] | components["schemas"]["SessionsOneRequest"] | components["schemas"]["SessionsDeleteMessageRequest"] | components["schemas"]["SessionsSetTitleRequest"] | components["schemas"]["SessionsSetMetadataRequest"] | components["schemas"]["SessionsClearRequest"];
            };
        };
        responses: {
            /**
             * @description `list`: `SessionList`. `history`: `SessionHistory`. `reset` and `clear`:
             *     `SessionsResetResult`. `delete` and `delete_message`: `Deleted`. `set_title`:
             *     `SessionTitle`. `set_metadata`: `SessionMetadata`.
             */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SessionList"] | components["schemas"]["SessionHistory"] | components["schemas"]["SessionsResetResult"] | components["schemas"]["Deleted"] | components["schemas"]["SessionTitle"] | components["schemas"]["SessionMetadata"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["ForbiddenActingFor"];
            404: components["responses"]["SessionsNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            409: components["responses"]["AmbiguousMessageID"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    sessionsPreflight: {
        parameters: {
            query?: never;
            header?: {
                /** @description The browser origin asking; CORS headers are answered only for allowed origins. */
                Origin?: components["parameters"]["Origin"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: components["responses"]["Preflight"];
        };
    };
    mcp: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The client's id for this request, echoed in the `X-Request-Id` answer header and
                 *     `request_id` of problem bodies when it is 1 to 128 printable ASCII characters; otherwise
                 *     a UUID is generated.
                 */
                "X-Request-Id"?: components["parameters"]["XRequestIdIn"];
                /**
                 * @description The greatest `Agentmem-Position` an earlier answer gave this client: the reads of this
                 *     request see at least the writes up to it (see "Read replicas and positions"). A value
                 *     that is not 16 hexadecimal digits, or more than one value, answers 400 with field
                 *     `Agentmem-Position`.
                 */
                "Agentmem-Position"?: components["parameters"]["PositionIn"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["JSONRPCMessage"];
            };
        };
        responses: {
            /** @description The JSON-RPC response (a tool's answer, or a JSON-RPC error). */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JSONRPCMessage"];
                };
            };
            /** @description A notification (such as `notifications/initialized`) was accepted; no body. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["ForbiddenActingFor"];
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    mcpPreflight: {
        parameters: {
            query?: never;
            header?: {
                /** @description The browser origin asking; CORS headers are answered only for allowed origins. */
                Origin?: components["parameters"]["Origin"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: components["responses"]["Preflight"];
        };
    };
    memories: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description Makes a retry safe: see the idempotency rules of `commit-turn`. 1 to 255 printable ASCII
                 *     characters (U+0020 to U+007E). An empty or otherwise invalid value answers 400 with field
                 *     `Idempotency-Key`.
                 */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
                /**
                 * @description The client's id for this request, echoed in the `X-Request-Id` answer header and
                 *     `request_id` of problem bodies when it is 1 to 128 printable ASCII characters; otherwise
                 *     a UUID is generated.
                 */
                "X-Request-Id"?: components["parameters"]["XRequestIdIn"];
                /**
                 * @description The greatest `Agentmem-Position` an earlier answer gave this client: the reads of this
                 *     request see at least the writes up to it (see "Read replicas and positions"). A value
                 *     that is not 16 hexadecimal digits, or more than one value, answers 400 with field
                 *     `Agentmem-Position`.
                 */
                "Agentmem-Position"?: components["parameters"]["PositionIn"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["MemoriesCreateRequest"] | components["schemas"]["MemoriesListRequest"] | components["schemas"]["MemoriesOneRequest"] | components["schemas"]["MemoriesUpdateRequest"];
            };
        };
        responses: {
            /**
             * @description `create` when the fact merged into an existing memory (`Idempotent-Replayed: true` on
             *     a replay): `MemoryCreated`. `list`: `MemoryList`. `get` and `update`: `MemoryItem`.
             *     `delete`: `Deleted`.
             */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "Agentmem-Position": components["headers"]["Agentmem-Position"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MemoryCreated"] | components["schemas"]["MemoryList"] | components["schemas"]["MemoryItem"] | components["schemas"]["Deleted"];
                };
            };
            /**
             * @description `create` stored a new memory (or, with `Idempotent-Replayed: true`, replays the
             *     answer of an earlier identical request that did).
             */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "Agentmem-Position": components["headers"]["Agentmem-Position"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "0b6e9e52-9d0c-4c61-9a51-5b3c1b2e8f10",
                     *       "merged": false
                     *     }
                     */
                    "application/json": components["schemas"]["MemoryCreated"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["ForbiddenMemories"];
            404: components["responses"]["MemoryNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            409: components["responses"]["SameFactConflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    memoriesPreflight: {
        parameters: {
            query?: never;
            header?: {
                /** @description The browser origin asking; CORS headers are answered only for allowed origins. */
                Origin?: components["parameters"]["Origin"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: components["responses"]["Preflight"];
        };
    };
    knowledge: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The client's id for this request, echoed in the `X-Request-Id` answer header and
                 *     `request_id` of problem bodies when it is 1 to 128 printable ASCII characters; otherwise
                 *     a UUID is generated.
                 */
                "X-Request-Id"?: components["parameters"]["XRequestIdIn"];
                /**
                 * @description The greatest `Agentmem-Position` an earlier answer gave this client: the reads of this
                 *     request see at least the writes up to it (see "Read replicas and positions"). A value
                 *     that is not 16 hexadecimal digits, or more than one value, answers 400 with field
                 *     `Agentmem-Position`.
                 */
                "Agentmem-Position"?: components["parameters"]["PositionIn"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["KnowledgeIngestRequest"] | components["schemas"]["KnowledgeSearchRequest"] | components["schemas"]["KnowledgeDeleteRequest"];
            };
        };
        responses: {
            /** @description `search`: `KnowledgeSearchResult`. `delete`: `KnowledgeDeleted`. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["KnowledgeSearchResult"] | components["schemas"]["KnowledgeDeleted"];
                };
            };
            /** @description `ingest`: the source now has `chunks` chunks; `replaced` chunks of an earlier ingest were removed. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["KnowledgeIngested"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["KnowledgeForbidden"];
            404: components["responses"]["KnowledgeSourceNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    knowledgePreflight: {
        parameters: {
            query?: never;
            header?: {
                /** @description The browser origin asking; CORS headers are answered only for allowed origins. */
                Origin?: components["parameters"]["Origin"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: components["responses"]["Preflight"];
        };
    };
    forgetUser: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The client's id for this request, echoed in the `X-Request-Id` answer header and
                 *     `request_id` of problem bodies when it is 1 to 128 printable ASCII characters; otherwise
                 *     a UUID is generated.
                 */
                "X-Request-Id"?: components["parameters"]["XRequestIdIn"];
                /**
                 * @description The greatest `Agentmem-Position` an earlier answer gave this client: the reads of this
                 *     request see at least the writes up to it (see "Read replicas and positions"). A value
                 *     that is not 16 hexadecimal digits, or more than one value, answers 400 with field
                 *     `Agentmem-Position`.
                 */
                "Agentmem-Position"?: components["parameters"]["PositionIn"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["ForgetUserRequest"];
            };
        };
        responses: {
            /** @description The rows deleted, per table. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ForgetUserResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["ForbiddenActingFor"];
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    forgetUserPreflight: {
        parameters: {
            query?: never;
            header?: {
                /** @description The browser origin asking; CORS headers are answered only for allowed origins. */
                Origin?: components["parameters"]["Origin"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: components["responses"]["Preflight"];
        };
    };
    intents: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The client's id for this request, echoed in the `X-Request-Id` answer header and
                 *     `request_id` of problem bodies when it is 1 to 128 printable ASCII characters; otherwise
                 *     a UUID is generated.
                 */
                "X-Request-Id"?: components["parameters"]["XRequestIdIn"];
                /**
                 * @description The greatest `Agentmem-Position` an earlier answer gave this client: the reads of this
                 *     request see at least the writes up to it (see "Read replicas and positions"). A value
                 *     that is not 16 hexadecimal digits, or more than one value, answers 400 with field
                 *     `Agentmem-Position`.
                 */
                "Agentmem-Position"?: components["parameters"]["PositionIn"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["IntentRequest"];
            };
        };
        responses: {
            /**
             * @description The intent's jobs, one per enabled adapter (none when no adapter is enabled): each
             *     written now, or, for a backfill, the adapter's backfill of the session that was still
             *     pending (`coalesced` when every one was).
             */
            202: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "intent_id": "5b7c9d1e-3f2a-4b6c-8d0e-1f2a3b4c5d6e",
                     *       "type": "syncSession",
                     *       "session_id": "7d0c4f3e-2b1a-4c5d-8e9f-0a1b2c3d4e5f",
                     *       "jobs": [
                     *         {
                     *           "id": "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b",
                     *           "adapter": "webhook",
                     *           "status": "pending"
                     *         }
                     *       ],
                     *       "coalesced": false
                     *     }
                     */
                    "application/json": components["schemas"]["IntentResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["ForbiddenActingFor"];
            404: components["responses"]["NotFound"];
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            /**
             * @description `rate_limited`: the general limits (see the shared RateLimited response), or, for a
             *     `backfillSession`, the user's backfill limit: more than `RATE_LIMIT_BACKFILL_PER_HOUR`
             *     backfills (default 30, `0` none) in the last hour, counted apart from the general
             *     limits, whatever the session and whether they coalesced. Nothing was written;
             *     `detail` says which limit, and `Retry-After` the seconds until one is let through.
             */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    intentsPreflight: {
        parameters: {
            query?: never;
            header?: {
                /** @description The browser origin asking; CORS headers are answered only for allowed origins. */
                Origin?: components["parameters"]["Origin"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: components["responses"]["Preflight"];
        };
    };
    jobs: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The client's id for this request, echoed in the `X-Request-Id` answer header and
                 *     `request_id` of problem bodies when it is 1 to 128 printable ASCII characters; otherwise
                 *     a UUID is generated.
                 */
                "X-Request-Id"?: components["parameters"]["XRequestIdIn"];
                /**
                 * @description The greatest `Agentmem-Position` an earlier answer gave this client: the reads of this
                 *     request see at least the writes up to it (see "Read replicas and positions"). A value
                 *     that is not 16 hexadecimal digits, or more than one value, answers 400 with field
                 *     `Agentmem-Position`.
                 */
                "Agentmem-Position"?: components["parameters"]["PositionIn"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["JobsListRequest"] | components["schemas"]["JobsOneRequest"] | components["schemas"]["JobsPurgeRequest"];
            };
        };
        responses: {
            /** @description `list`: `JobList`. `get` and `retry`: `Job`. `purge`: `JobsPurged`. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobList"] | components["schemas"]["Job"] | components["schemas"]["JobsPurged"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["ForbiddenServiceOnly"];
            404: components["responses"]["JobNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            409: components["responses"]["JobNotDead"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    jobsPreflight: {
        parameters: {
            query?: never;
            header?: {
                /** @description The browser origin asking; CORS headers are answered only for allowed origins. */
                Origin?: components["parameters"]["Origin"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: components["responses"]["Preflight"];
        };
    };
    processJobs: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The client's id for this request, echoed in the `X-Request-Id` answer header and
                 *     `request_id` of problem bodies when it is 1 to 128 printable ASCII characters; otherwise
                 *     a UUID is generated.
                 */
                "X-Request-Id"?: components["parameters"]["XRequestIdIn"];
                /**
                 * @description The greatest `Agentmem-Position` an earlier answer gave this client: the reads of this
                 *     request see at least the writes up to it (see "Read replicas and positions"). A value
                 *     that is not 16 hexadecimal digits, or more than one value, answers 400 with field
                 *     `Agentmem-Position`.
                 */
                "Agentmem-Position"?: components["parameters"]["PositionIn"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                /**
                 * @example {
                 *       "max_duration_ms": 20000,
                 *       "limit": 1000
                 *     }
                 */
                "application/json": components["schemas"]["ProcessJobsRequest"];
            };
        };
        responses: {
            /** @description What the run did. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "processed": 42,
                     *       "done": 40,
                     *       "retried": 1,
                     *       "dead": 1,
                     *       "more": false
                     *     }
                     */
                    "application/json": components["schemas"]["ProcessJobsResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["ForbiddenServiceOnly"];
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    processJobsPreflight: {
        parameters: {
            query?: never;
            header?: {
                /** @description The browser origin asking; CORS headers are answered only for allowed origins. */
                Origin?: components["parameters"]["Origin"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: components["responses"]["Preflight"];
        };
    };
}
