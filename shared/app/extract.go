package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/llm"
	"github.com/agentmem/agentmem/shared/llm/prompts"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// Fact extraction, an adapter.Extract job of the outbox, written in commit-turn's transaction
// (store.Config.ExtractFacts) and run by process-jobs, never inside the commit's request.
//
// The job reads the turn's messages (the seq range its refs name), recalls the memories of the
// turn's scope (user, tenant and the session's agent) nearest to the turn's user text, and asks
// the chat model (prompts.ExtractFacts) for 0 to prompts.MaxFacts facts, each either new or
// naming the existing memory it contradicts, corrects or refines. A new fact is stored through
// store.CreateMemory, the path of memories create, so a repeat of a known fact (same text or a
// near-duplicate) merges into its memory. A fact that names a memory replaces that memory's
// text (store.UpdateMemory, re-embedded), and the memory's metadata keeps the texts it
// replaced, newest last (metadata.previous, at most maxPreviousTexts), but only while the
// memory still holds the text the model saw and is unchanged since it was read for the update:
// one the user edited while the model answered is left as the user wrote it, and the fact is
// dropped (ExtractStats.Dropped). Every memory a fact
// touches records its source in metadata: {"source": "extraction", "session_id", "seq_from",
// "seq_to", "kind", "prompt", "model"}.
//
// An answer that fails its checks (schema, lengths, ids) is counted (ExtractStats.Malformed,
// prompts.Stats) and dropped: the job is done, nothing is stored. A provider that cannot
// answer fails the job, which the outbox retries with backoff, then marks dead.

// Limits of fact extraction.
const (
	// extractRecallK is how many of the scope's memories nearest to the turn the model sees.
	extractRecallK = 10
	// maxPreviousTexts is how many replaced texts a memory's metadata keeps.
	maxPreviousTexts = 5
	// extractQueryChars bounds the recall query built from the turn's user text.
	extractQueryChars = 2000
)

// SourceExtraction is the metadata source of a memory fact extraction wrote or updated.
const SourceExtraction = "extraction"

// ExtractStats counts what fact extraction did since the process started.
type ExtractStats struct {
	// Jobs is the extraction jobs run to an end (done), Malformed those whose answer was
	// dropped, Failed those that failed (to be retried).
	Jobs, Malformed, Failed int64
	// Created, Merged and Updated count the facts stored: as new memories, merged into a
	// memory holding the same fact, and replacing a contradicted memory's text.
	Created, Merged, Updated int64
	// Dropped counts the facts that would have replaced a memory the user changed while the
	// model answered: the user's text stands.
	Dropped int64
}

type extractCounters struct {
	modelJobCounts
	created, merged, updated, dropped atomic.Int64
}

// modelJobCounts counts how the jobs that ask the chat model ended.
type modelJobCounts struct {
	jobs, malformed, failed atomic.Int64
}

// end counts how job j ended with err and says what the outbox records: a malformed answer
// (llm.ErrMalformedOutput) is dropped, never stored, and logged as what's; the job is done.
// Any other error is the job's, retried.
func (c *modelJobCounts) end(ctx context.Context, log *slog.Logger, j store.ClaimedJob, err error, what string) error {
	switch {
	case err == nil:
		c.jobs.Add(1)
	case errors.Is(err, llm.ErrMalformedOutput):
		c.jobs.Add(1)
		c.malformed.Add(1)
		log.WarnContext(ctx, what+" dropped a malformed answer", "job_id", j.ID.String(), "error", errorText(err))
		return nil
	default:
		c.failed.Add(1)
	}
	return err
}

// ExtractStats is what fact extraction did so far.
func (a *App) ExtractStats() ExtractStats {
	c := &a.extractCount
	return ExtractStats{Jobs: c.jobs.Load(), Malformed: c.malformed.Load(), Failed: c.failed.Load(),
		Created: c.created.Load(), Merged: c.merged.Load(), Updated: c.updated.Load(), Dropped: c.dropped.Load()}
}

// errNoChat fails an internal job in a process without a chat model.
var errNoChat = errors.New("no chat model is configured in this process (CHAT_PROVIDER)")

// extractionSource is the metadata every memory extraction touches records.
type extractionSource struct {
	Source    string    `json:"source"`
	SessionID uuid.UUID `json:"session_id"`
	SeqFrom   int64     `json:"seq_from"`
	SeqTo     int64     `json:"seq_to"`
	Kind      string    `json:"kind"`
	Prompt    string    `json:"prompt"`
	Model     string    `json:"model"`
}

// previousText is one text a fact replaced.
type previousText struct {
	Content    string    `json:"content"`
	ReplacedAt time.Time `json:"replaced_at"`
}

// extract runs one extraction job.
func (a *App) extract(ctx context.Context, j store.ClaimedJob) error {
	if a.cfg.Prompts == nil {
		return errNoChat
	}
	// A malformed answer is not asked again: the same turn would likely get the same answer,
	// and the count says how often it happens.
	return a.extractCount.end(ctx, a.log, j, a.extractTurn(ctx, j), "fact extraction")
}

func (a *App) extractTurn(ctx context.Context, j store.ClaimedJob) error {
	if j.SessionID == nil {
		return errors.New("extraction job names no session")
	}
	events, err := a.store.LoadEvents(ctx, store.ClaimedJob{Job: memory.Job{ID: j.ID, Intent: j.Intent,
		CreatedAt: j.CreatedAt, SessionID: j.SessionID, UserID: j.UserID}, EventID: j.EventID, TenantID: j.TenantID,
		Agent: j.Agent, Refs: j.Refs})
	if err != nil {
		return fmt.Errorf("read turn: %w", err)
	}
	if len(events) != 1 || events[0].SeqFrom == nil || events[0].SeqTo == nil {
		return errors.New("extraction job names no turn")
	}
	ev := events[0]
	sc := memory.Scope{TenantID: j.TenantID, UserID: j.UserID, Agent: j.Agent}
	var query []string
	for _, m := range ev.Messages {
		if m.Role == memory.RoleUser && strings.TrimSpace(m.Content) != "" {
			query = append(query, m.Content)
		}
	}
	if len(query) == 0 {
		// No user text (deleted since, or a turn without one): nothing to extract, nothing
		// asked.
		return nil
	}
	q := strings.Join(query, "\n")
	if r := []rune(q); len(r) > extractQueryChars {
		q = string(r[:extractQueryChars])
	}
	qv, err := a.EmbedQuery(ctx, q, memory.ModeHybrid)
	if err != nil {
		return fmt.Errorf("recall memories: %w", err)
	}
	hits, err := a.store.Recall(ctx, store.RecallParams{Scope: sc, Query: q, K: extractRecallK, Mode: memory.ModeHybrid,
		QueryVector: qv, Model: a.cfg.Embedder.Model()})
	if err != nil {
		return fmt.Errorf("recall memories: %w", err)
	}
	// Recall also ranks the user's agent-less memories, which every agent shares: the model
	// sees them (a fact they hold is known already), but only the scope's own are updated
	// (see updateFact).
	existing := make([]prompts.Memory, 0, len(hits))
	shown := make(map[uuid.UUID]string, len(hits))
	for _, h := range hits {
		id, err := uuid.Parse(h.ID) // a memory's id
		if err != nil {
			continue
		}
		existing = append(existing, prompts.Memory{ID: id, Text: h.Content})
		shown[id] = h.Content
	}
	facts, err := a.cfg.Prompts.ExtractFacts(ctx, prompts.FactsInput{Turn: ev.Messages, Existing: existing})
	if err != nil {
		return err
	}
	src := extractionSource{Source: SourceExtraction, SessionID: *j.SessionID, SeqFrom: *ev.SeqFrom, SeqTo: *ev.SeqTo,
		Prompt: facts.Prompt, Model: facts.Model}
	for _, f := range facts.Facts {
		src.Kind = f.Kind
		err := a.storeFact(ctx, sc, f, src, shown)
		if errors.Is(err, store.ErrSourceGone) {
			// The turn was deleted, reset, cleared or erased while the model answered: its
			// facts go with it.
			a.log.InfoContext(ctx, "facts dropped: their turn is gone", "job_id", j.ID.String())
			return nil
		}
		if err != nil {
			return err
		}
	}
	a.log.InfoContext(ctx, "facts extracted", "job_id", j.ID.String(), "facts", len(facts.Facts),
		"input_tokens", facts.Usage.InputTokens, "output_tokens", facts.Usage.OutputTokens)
	return nil
}

// storeFact stores one extracted fact: a new one as memories create stores a fact, one that
// updates a memory into that memory. shown holds the memories the model saw, by id, with the
// text it saw.
func (a *App) storeFact(ctx context.Context, sc memory.Scope, f prompts.Fact, src extractionSource, shown map[uuid.UUID]string) error {
	meta, err := json.Marshal(src)
	if err != nil {
		return err
	}
	if f.Updates != nil {
		if seen, ok := shown[*f.Updates]; ok {
			res, err := a.updateFact(ctx, sc, *f.Updates, seen, f.Text, src)
			switch {
			case err != nil:
				return err
			case res == factStored:
				return nil
			case res == factEdited:
				// The user changed the memory while the model answered: their text stands,
				// and the fact, drawn from the text they replaced, is dropped (stored as new
				// it could merge into their memory and overwrite it).
				a.extractCount.dropped.Add(1)
				return nil
			}
		}
		// The memory went meanwhile, or another one holds the fact already: store it as new,
		// which merges it into a memory holding it.
	}
	vs, err := a.EmbedForStorage(ctx, []string{f.Text})
	if err != nil {
		return fmt.Errorf("store fact: %w", err)
	}
	out, _, err := a.store.CreateMemory(ctx, store.CreateMemoryParams{Scope: sc, Content: f.Text, Metadata: meta,
		TTL: a.cfg.DefaultRetention, TTLIsDefault: true, Vector: vs[0], Model: a.cfg.Embedder.Model(),
		Source: &store.MessageRange{SessionID: src.SessionID, SeqFrom: src.SeqFrom, SeqTo: src.SeqTo}})
	if err != nil {
		return fmt.Errorf("store fact: %w", err)
	}
	if out.Merged {
		a.extractCount.merged.Add(1)
	} else {
		a.extractCount.created.Add(1)
	}
	return nil
}

// The outcomes of updateFact.
type factUpdate int

const (
	// factStored: the memory holds the fact now (or held it already).
	factStored factUpdate = iota
	// factElsewhere: the memory is gone, another scope's, or another memory holds the fact:
	// the fact is to be stored as new.
	factElsewhere
	// factEdited: the memory changed since the model saw it (the user edited it meanwhile).
	factEdited
)

// updateFact replaces the text of memory id with text, keeping the text it had in the
// metadata's previous texts. seen is the text the model saw: a memory changed since, or
// between this read and the update (content or metadata), is left as it is.
func (a *App) updateFact(ctx context.Context, sc memory.Scope, id uuid.UUID, seen, text string, src extractionSource) (factUpdate, error) {
	cur, err := a.store.GetMemory(ctx, sc, id)
	if codeOf(err) == apierror.NotFound {
		return factElsewhere, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read memory: %w", err)
	}
	if cur.Agent == nil || *cur.Agent != sc.Agent {
		// Another scope's memory (the user's agent-less ones): the fact is stored as the
		// turn's own.
		return factElsewhere, nil
	}
	if store.ContentKey(cur.Content) == store.ContentKey(text) {
		return factStored, nil // the same fact: nothing changes
	}
	if cur.Content != seen {
		return factEdited, nil
	}
	meta := map[string]json.RawMessage{}
	if len(cur.Metadata) > 0 {
		if err := json.Unmarshal(cur.Metadata, &meta); err != nil || meta == nil {
			meta = map[string]json.RawMessage{}
		}
	}
	var prev []previousText
	if raw, ok := meta["previous"]; ok {
		if json.Unmarshal(raw, &prev) != nil {
			prev = nil
		}
	}
	prev = append(prev, previousText{Content: cur.Content, ReplacedAt: time.Now().UTC().Truncate(time.Millisecond)})
	if len(prev) > maxPreviousTexts {
		prev = prev[len(prev)-maxPreviousTexts:]
	}
	srcFields, err := json.Marshal(src)
	if err != nil {
		return 0, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(srcFields, &fields); err != nil {
		return 0, err
	}
	for k, v := range fields {
		meta[k] = v
	}
	if meta["previous"], err = json.Marshal(prev); err != nil {
		return 0, err
	}
	md, err := json.Marshal(meta)
	if err != nil {
		return 0, err
	}
	vs, err := a.EmbedForStorage(ctx, []string{text})
	if err != nil {
		return 0, fmt.Errorf("update memory: %w", err)
	}
	_, err = a.store.UpdateMemory(ctx, store.UpdateMemoryParams{Scope: sc, ID: id, Content: &text, Metadata: md,
		Vector: vs[0], Model: a.cfg.Embedder.Model(), IfUpdatedAt: &cur.UpdatedAt})
	switch {
	case err == nil:
		a.extractCount.updated.Add(1)
		return factStored, nil
	case codeOf(err) == apierror.NotFound:
		return factElsewhere, nil
	case codeOf(err) == apierror.Conflict && errors.Is(err, store.ErrMemoryChanged):
		return factEdited, nil
	case codeOf(err) == apierror.Conflict:
		return factElsewhere, nil // another memory holds the fact
	}
	return 0, fmt.Errorf("update memory: %w", err)
}

// codeOf is err's code, "" for nil.
func codeOf(err error) apierror.Code {
	if err == nil {
		return ""
	}
	return Problem(err).Code
}
