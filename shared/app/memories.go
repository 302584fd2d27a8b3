package app

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// The operations of the memories function.
const (
	MemoriesOpList   = "list"
	MemoriesOpGet    = "get"
	MemoriesOpCreate = "create"
	MemoriesOpUpdate = "update"
	MemoriesOpDelete = "delete"
)

// Limits of memories list.
const (
	memoriesMaxLimit     = 100
	memoriesDefaultLimit = 20
)

// ListMemoriesInput is the request of memories list.
type ListMemoriesInput struct {
	ActingFor
	Op *string `json:"op"`
	// Shared lists the tenant's shared memories instead of a user's (see sharedScope).
	Shared *bool   `json:"shared"`
	Agent  *string `json:"agent"`
	Limit  *int64  `json:"limit"`
	Cursor *string `json:"cursor"`
}

// MemoryList is a page of memories.
type MemoryList struct {
	Items      []memory.MemoryItem `json:"items"`
	NextCursor *string             `json:"next_cursor"`
}

// ListMemories lists a user's memories, the newest first, or with shared the tenant's shared
// memories (a user: their own tenant's). With agent, the list holds that agent's memories and
// the agent-less ones: exactly what the agent recalls.
func (a *App) ListMemories(ctx context.Context, pr auth.Principal, req ListMemoriesInput) (MemoryList, error) {
	var f apierror.Fields
	sc, err := memoryScope(pr, req.ActingFor, req.Shared, false, req.Agent, "", &f)
	if err != nil {
		return MemoryList{}, err
	}
	p := store.ListMemoriesParams{Scope: sc}
	p.Limit = int(intField(&f, "limit", req.Limit, memoriesDefaultLimit, 1, memoriesMaxLimit))
	p.After = memoriesCursor.after(&f, req.Cursor)
	if err := f.Err(); err != nil {
		return MemoryList{}, err
	}
	page, err := a.store.ListMemories(store.MayReadReplica(ctx), p)
	if err != nil {
		return MemoryList{}, err
	}
	return MemoryList{Items: page.Items, NextCursor: memoriesCursor.next(page.Next)}, nil
}

// OneMemoryInput is the request of memories get and delete.
type OneMemoryInput struct {
	ActingFor
	Op *string `json:"op"`
	ID *string `json:"id"`
	// Shared names a shared memory of the tenant (see sharedScope).
	Shared *bool `json:"shared"`
}

// memoryOf validates whose memory a request names: a user's, or with shared a shared memory of
// the tenant (write for a change, which only a service caller may make). A memory id names one
// memory of the user whatever its agent, so these requests take no agent.
func memoryOf(p auth.Principal, a ActingFor, shared *bool, write bool, memoryID *string, f *apierror.Fields) (memory.Scope, uuid.UUID, error) {
	sc, err := memoryScope(p, a, shared, write, nil, "", f)
	if err != nil {
		return sc, uuid.Nil, err
	}
	var id uuid.UUID
	if p := parseUUID(f, "id", memoryID, true); p != nil {
		id = *p
	}
	return sc, id, nil
}

func oneMemory(p auth.Principal, in OneMemoryInput, write bool) (memory.Scope, uuid.UUID, error) {
	var f apierror.Fields
	sc, id, err := memoryOf(p, in.ActingFor, in.Shared, write, in.ID, &f)
	if err != nil {
		return sc, id, err
	}
	return sc, id, f.Err()
}

// MemoryDeleted is the answer of memories delete.
type MemoryDeleted struct {
	Deleted bool `json:"deleted"`
}

// GetMemory reads one memory: the user's own or a shared memory of their tenant (marked
// shared), or with shared a shared memory of the tenant; one that is missing, expired, someone
// else's or another tenant's is not found.
func (a *App) GetMemory(ctx context.Context, p auth.Principal, in OneMemoryInput) (memory.MemoryItem, error) {
	sc, id, err := oneMemory(p, in, false)
	if err != nil {
		return memory.MemoryItem{}, err
	}
	return a.store.GetMemory(ctx, sc, id)
}

// DeleteMemory deletes one memory of the user, or with shared (service callers only) a shared
// memory of the tenant. A user's deletion of a shared memory of their tenant is forbidden.
func (a *App) DeleteMemory(ctx context.Context, p auth.Principal, in OneMemoryInput) (MemoryDeleted, error) {
	sc, id, err := oneMemory(p, in, true)
	if err != nil {
		return MemoryDeleted{}, err
	}
	if err := a.store.DeleteMemory(ctx, sc, id); err != nil {
		return MemoryDeleted{}, err
	}
	a.notify(ctx)
	return MemoryDeleted{Deleted: true}, nil
}

// UpdateMemoryInput is the request of memories update. It is flat: encoding/json would name a
// field of a nested embedded struct by its Go path in errors.
type UpdateMemoryInput struct {
	ActingFor
	Op       *string         `json:"op"`
	ID       *string         `json:"id"`
	Content  *string         `json:"content"`
	Metadata json.RawMessage `json:"metadata"`
	// Shared names a shared memory of the tenant (service callers only, see sharedScope).
	Shared *bool `json:"shared"`
}

// UpdateMemory changes content and/or metadata. New content is embedded again; when it is the
// same fact as another memory of the scope the answer is a conflict and nothing changes.
// Metadata replaces the stored object as a whole ({} empties it; null is refused as
// ambiguous). The expiry stays as it was.
func (a *App) UpdateMemory(ctx context.Context, pr auth.Principal, req UpdateMemoryInput) (memory.MemoryItem, error) {
	var f apierror.Fields
	sc, id, err := memoryOf(pr, req.ActingFor, req.Shared, true, req.ID, &f)
	if err != nil {
		return memory.MemoryItem{}, err
	}
	p := store.UpdateMemoryParams{Scope: sc, ID: id}
	if req.Content != nil {
		if c, ok := factField(&f, "content", req.Content); ok {
			p.Content = &c
		}
	}
	if raw := bytes.TrimSpace(req.Metadata); len(raw) > 0 {
		if string(raw) == "null" {
			f.Add("metadata", "must be a JSON object; {} empties the metadata")
		} else if md := objectField(&f, "metadata", raw, maxMetadataBytes); md != nil {
			p.Metadata = md
		}
	}
	if req.Content == nil && len(bytes.TrimSpace(req.Metadata)) == 0 {
		f.Add("content", "or metadata is required: update changes at least one of them")
	}
	if err := f.Err(); err != nil {
		return memory.MemoryItem{}, err
	}
	if p.Content != nil {
		// Embed before the transaction: no row lock is held while a model works.
		vs, err := a.EmbedForStorage(ctx, []string{*p.Content})
		if err != nil {
			return memory.MemoryItem{}, err
		}
		p.Vector, p.Model = vs[0], a.cfg.Embedder.Model()
	}
	out, err := a.store.UpdateMemory(ctx, p)
	if err == nil {
		a.notify(ctx)
	}
	return out, err
}

// CreateMemoryInput is the request of memories create. Agent defaults to "default", the agent
// of a turn that names none, so a fact remembered this way merges with the same fact committed
// in a turn.
type CreateMemoryInput struct {
	ActingFor
	Op         *string         `json:"op"`
	Content    *string         `json:"content"`
	Metadata   json.RawMessage `json:"metadata"`
	Agent      *string         `json:"agent"`
	TTLSeconds *int64          `json:"ttl_seconds"`
	// Shared stores a shared memory of the tenant (service callers only, see sharedScope):
	// merged only with the tenant's shared memories of the agent. Its agent defaults to none:
	// every agent recalls it.
	Shared *bool `json:"shared"`
	// Idempotency is the request's Idempotency-Key, nil without one.
	Idempotency *IdempotencyKey `json:"-"`
}

// CreateMemoryOutput is the answer of memories create; Replayed marks one replayed for a retry.
type CreateMemoryOutput struct {
	memory.CreatedMemory
	Replayed bool `json:"-"`
}

// CreateMemory stores one long-term fact without a turn, with commit-turn's near-duplicate
// merging (see store.CreateMemory); idempotent with an Idempotency-Key.
func (a *App) CreateMemory(ctx context.Context, pr auth.Principal, req CreateMemoryInput) (CreateMemoryOutput, error) {
	var f apierror.Fields
	sc, err := memoryScope(pr, req.ActingFor, req.Shared, true, req.Agent, memory.DefaultAgent, &f)
	if err != nil {
		return CreateMemoryOutput{}, err
	}
	p := store.CreateMemoryParams{Scope: sc, TTL: a.cfg.DefaultRetention, TTLIsDefault: req.TTLSeconds == nil}
	p.Content, _ = factField(&f, "content", req.Content)
	p.Metadata = objectField(&f, "metadata", req.Metadata, maxMetadataBytes)
	if req.TTLSeconds != nil {
		p.TTL = time.Duration(intField(&f, "ttl_seconds", req.TTLSeconds, 0, 1, maxTTLSeconds)) * time.Second
	}
	p.Idempotency = idempotencyOf(&f, pr, "memories", req.Idempotency)
	if err := f.Err(); err != nil {
		return CreateMemoryOutput{}, err
	}
	if p.Idempotency != nil {
		// A retry is answered from the record before anything is embedded again.
		if res, found, err := a.store.ReplayCreatedMemory(ctx, sc, *p.Idempotency); err != nil || found {
			return CreateMemoryOutput{CreatedMemory: res, Replayed: found}, err
		}
	}
	vs, err := a.EmbedForStorage(ctx, []string{p.Content})
	if err != nil {
		return CreateMemoryOutput{}, err
	}
	p.Vector, p.Model = vs[0], a.cfg.Embedder.Model()
	res, replayed, err := a.store.CreateMemory(ctx, p)
	if err == nil && !replayed {
		a.notify(ctx)
	}
	return CreateMemoryOutput{CreatedMemory: res, Replayed: replayed}, err
}
