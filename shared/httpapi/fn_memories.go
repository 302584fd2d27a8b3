package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// The operations of the memories function.
const (
	memoriesOpList   = "list"
	memoriesOpGet    = "get"
	memoriesOpUpdate = "update"
	memoriesOpDelete = "delete"
)

// Limits of memories list.
const (
	memoriesMaxLimit     = 100
	memoriesDefaultLimit = 20
)

// memories manages a user's long-term memories: list, get, update (re-embeds new content),
// delete. A memory that is missing, expired or someone else's is not found (404).
func (s *Server) memories(ctx context.Context, c *call) (int, any, error) {
	op, err := opOf(c.body, memoriesOpList, memoriesOpGet, memoriesOpUpdate, memoriesOpDelete)
	if err != nil {
		return 0, nil, err
	}
	switch op {
	case memoriesOpList:
		return s.listMemories(ctx, c)
	case memoriesOpUpdate:
		return s.updateMemory(ctx, c)
	default:
		return s.getOrDeleteMemory(ctx, c, op)
	}
}

type listMemoriesRequest struct {
	actingFor
	Op     *string `json:"op"`
	Agent  *string `json:"agent"`
	Limit  *int64  `json:"limit"`
	Cursor *string `json:"cursor"`
}

type memoryList struct {
	Items      []store.MemoryItem `json:"items"`
	NextCursor *string            `json:"next_cursor"`
}

// listMemories lists the newest first. With agent, the list holds that agent's memories and
// the agent-less ones: exactly what the agent recalls.
func (s *Server) listMemories(ctx context.Context, c *call) (int, any, error) {
	var req listMemoriesRequest
	if err := decode(c.body, &req); err != nil {
		return 0, nil, err
	}
	var f apierror.Fields
	sc, err := c.scope(req.actingFor, req.Agent, "", &f)
	if err != nil {
		return 0, nil, err
	}
	p := store.ListMemoriesParams{Scope: sc}
	p.Limit = int(intField(&f, "limit", req.Limit, memoriesDefaultLimit, 1, memoriesMaxLimit))
	if t, id, ok := cursorKeyOf(&f, cursorMemories, req.Cursor); ok {
		p.After = &store.MemoryKey{CreatedAt: t, ID: id}
	}
	if err := f.Err(); err != nil {
		return 0, nil, err
	}
	page, err := s.store.ListMemories(ctx, p)
	if err != nil {
		return 0, nil, err
	}
	out := memoryList{Items: page.Items}
	if page.Next != nil {
		cur := cursorAfterKey(cursorMemories, page.Next.CreatedAt, page.Next.ID)
		out.NextCursor = &cur
	}
	return http.StatusOK, out, nil
}

type oneMemoryRequest struct {
	actingFor
	Op *string `json:"op"`
	ID *string `json:"id"`
}

// memoryOf validates whose memory a request names. A memory id names one memory of the user
// whatever its agent, so these requests take no agent.
func (c *call) memoryOf(a actingFor, memoryID *string, f *apierror.Fields) (memory.Scope, uuid.UUID, error) {
	sc, err := c.scope(a, nil, "", f)
	if err != nil {
		return sc, uuid.Nil, err
	}
	var id uuid.UUID
	if p := parseUUID(f, "id", memoryID, true); p != nil {
		id = *p
	}
	return sc, id, nil
}

func (s *Server) getOrDeleteMemory(ctx context.Context, c *call, op string) (int, any, error) {
	var req oneMemoryRequest
	if err := decode(c.body, &req); err != nil {
		return 0, nil, err
	}
	var f apierror.Fields
	sc, id, err := c.memoryOf(req.actingFor, req.ID, &f)
	if err != nil {
		return 0, nil, err
	}
	if err := f.Err(); err != nil {
		return 0, nil, err
	}
	if op == memoriesOpDelete {
		if err := s.store.DeleteMemory(ctx, sc, id); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, map[string]bool{"deleted": true}, nil
	}
	m, err := s.store.GetMemory(ctx, sc, id)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, m, nil
}

// updateMemoryRequest is flat: encoding/json would name a field of a nested embedded struct by
// its Go path in errors.
type updateMemoryRequest struct {
	actingFor
	Op       *string         `json:"op"`
	ID       *string         `json:"id"`
	Content  *string         `json:"content"`
	Metadata json.RawMessage `json:"metadata"`
}

// updateMemory changes content and/or metadata. New content is embedded again; when it is the
// same fact as another memory of the scope the answer is 409 and nothing changes. Metadata
// replaces the stored object as a whole ({} empties it; null is refused as ambiguous). The
// expiry stays as it was.
func (s *Server) updateMemory(ctx context.Context, c *call) (int, any, error) {
	var req updateMemoryRequest
	if err := decode(c.body, &req); err != nil {
		return 0, nil, err
	}
	var f apierror.Fields
	sc, id, err := c.memoryOf(req.actingFor, req.ID, &f)
	if err != nil {
		return 0, nil, err
	}
	p := store.UpdateMemoryParams{Scope: sc, ID: id}
	if req.Content != nil {
		switch {
		case len(bytes.TrimSpace([]byte(*req.Content))) == 0:
			f.Add("content", "must not be blank")
		case memory.CharCount(*req.Content) > maxMemoryChars:
			f.Addf("content", "must be at most %d characters", maxMemoryChars)
		default:
			p.Content = req.Content
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
		return 0, nil, err
	}
	m, err := s.store.UpdateMemory(ctx, p)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, m, nil
}
