package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/knowledge"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// Limits of knowledge.
const (
	knowledgeSourceMaxChars = 512
	// knowledgeContentMaxBytes bounds a document: what one request body can carry, whichever
	// way it comes in.
	knowledgeContentMaxBytes = MaxBody
)

// The operations of knowledge.
const (
	knowledgeOpIngest = "ingest"
	knowledgeOpSearch = "search"
	knowledgeOpDelete = "delete"
)

type knowledgeIngestRequest struct {
	Op       string          `json:"op"`
	TenantID *string         `json:"tenant_id"`
	Source   *string         `json:"source"`
	Content  *string         `json:"content"`
	Metadata json.RawMessage `json:"metadata"`
}

type knowledgeSearchRequest struct {
	Op       string  `json:"op"`
	TenantID *string `json:"tenant_id"`
	Query    *string `json:"query"`
	K        *int64  `json:"k"`
	Mode     *string `json:"mode"`
}

type knowledgeDeleteRequest struct {
	Op       string  `json:"op"`
	TenantID *string `json:"tenant_id"`
	Source   *string `json:"source"`
}

type knowledgeDeleted struct {
	Source   string `json:"source"`
	TenantID string `json:"tenant_id"`
	Deleted  int64  `json:"deleted"`
}

// knowledge is the tenant's shared knowledge base: documents split into chunks, searched by
// every user of the tenant. It is not per user: a user token reads its own tenant's knowledge
// (app_metadata.tenant_id, or the tenant-less knowledge base when the token has none); a
// service caller names tenant_id (default "", the tenant-less one). A user naming another
// tenant gets 403.
//
//   - ingest {source, content, metadata?} (service callers only; 403 for users): splits content
//     into chunks of at most 1,000 characters overlapping by up to 150, cut at paragraphs, then
//     sentences, then words (a word is cut only when it alone is longer than a chunk), embeds
//     them and replaces every chunk of an earlier ingest of the same source in one transaction:
//     a concurrent search sees the old document or the new one, never a mix, never none.
//     source is 1 to 512 characters without control characters; content must hold some
//     non-white-space text (up to what a 1 MiB body carries); metadata is a JSON object of up to
//     16 KiB stored with every chunk. 201 {source, tenant_id, chunks, replaced}.
//   - search {query, k?, mode?}: query 1 to 4,096 characters, k 1 to 100 (default 10), mode
//     hybrid (default), vector or text, ranked as recall ranks memories. 200 {results: [{id,
//     source, chunk_index, content, score, metadata}]}, best first.
//   - delete {source} (service callers only): removes every chunk of the source. 200 {source,
//     tenant_id, deleted: n}; 404 when the tenant has no such source, as deleting a missing key
//     of user-memory is.
func (s *Server) knowledge(ctx context.Context, c *call) (int, any, error) {
	op, err := opOf(c.body, knowledgeOpIngest, knowledgeOpSearch, knowledgeOpDelete)
	if err != nil {
		return 0, nil, err
	}
	if op != knowledgeOpSearch && !c.principal.IsService() {
		return 0, nil, apierror.Newf(apierror.Forbidden, "knowledge %s is for service callers only", op)
	}
	switch op {
	case knowledgeOpIngest:
		var req knowledgeIngestRequest
		if err := decode(c.body, &req); err != nil {
			return 0, nil, err
		}
		var f apierror.Fields
		tenant, err := c.knowledgeTenant(req.TenantID, &f)
		if err != nil {
			return 0, nil, err
		}
		knowledgeSource(&f, req.Source)
		if req.Content == nil {
			f.Add("content", "is required")
		}
		md := objectField(&f, "metadata", req.Metadata, maxMetadataBytes)
		if err := f.Err(); err != nil {
			return 0, nil, err
		}
		res, err := s.IngestKnowledge(ctx, tenant, *req.Source, *req.Content, md)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusCreated, res, nil

	case knowledgeOpSearch:
		var req knowledgeSearchRequest
		if err := decode(c.body, &req); err != nil {
			return 0, nil, err
		}
		var f apierror.Fields
		tenant, err := c.knowledgeTenant(req.TenantID, &f)
		if err != nil {
			return 0, nil, err
		}
		p := store.KnowledgeSearchParams{TenantID: tenant}
		if !c.principal.IsService() {
			p.UserID = c.principal.UserID
		}
		switch {
		case req.Query == nil:
			f.Add("query", "is required")
		case memory.CharCount(*req.Query) < 1 || memory.CharCount(*req.Query) > maxQueryChars:
			f.Addf("query", "must be 1 to %d characters", maxQueryChars)
		default:
			p.Query = *req.Query
		}
		p.K = int(intField(&f, "k", req.K, 10, 1, 100))
		p.Mode = oneOf(&f, "mode", req.Mode, memory.ModeHybrid, memory.ModeHybrid, memory.ModeVector, memory.ModeText)
		if err := f.Err(); err != nil {
			return 0, nil, err
		}
		hits, err := s.store.SearchKnowledge(ctx, p)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, map[string]any{"results": hits}, nil

	default: // delete
		var req knowledgeDeleteRequest
		if err := decode(c.body, &req); err != nil {
			return 0, nil, err
		}
		var f apierror.Fields
		tenant, err := c.knowledgeTenant(req.TenantID, &f)
		if err != nil {
			return 0, nil, err
		}
		source := knowledgeSource(&f, req.Source)
		if err := f.Err(); err != nil {
			return 0, nil, err
		}
		n, err := s.store.DeleteKnowledge(ctx, tenant, source)
		if err != nil {
			return 0, nil, err
		}
		s.log.InfoContext(ctx, "knowledge delete", "request_id", c.requestID, "tenant_id", tenant, "chunks", n)
		return http.StatusOK, knowledgeDeleted{Source: source, TenantID: tenant, Deleted: n}, nil
	}
}

// IngestKnowledge splits a document, embeds it and stores it in a tenant's knowledge base in
// place of any earlier ingest of the same source. It applies the limits of the knowledge
// function, whatever the caller: the operator command ingests files through it.
func (s *Server) IngestKnowledge(ctx context.Context, tenant, source, content string, metadata json.RawMessage) (store.IngestResult, error) {
	var f apierror.Fields
	source = knowledgeSource(&f, &source)
	var chunks []knowledge.Chunk
	switch {
	case len(content) > knowledgeContentMaxBytes:
		f.Addf("content", "must be at most %d bytes", knowledgeContentMaxBytes)
	case strings.ContainsRune(content, 0):
		f.Add("content", `must not contain the NUL character (\u0000)`)
	default:
		chunks = knowledge.Split(content, knowledge.Options{})
		if len(chunks) == 0 {
			f.Add("content", "must not be blank")
		}
	}
	if err := f.Err(); err != nil {
		return store.IngestResult{}, err
	}
	texts := make([]string, len(chunks))
	for i, ch := range chunks {
		texts[i] = ch.Content
	}
	res, err := s.store.IngestKnowledge(ctx, store.IngestParams{TenantID: tenant, Source: source, Chunks: texts, Metadata: metadata})
	if err != nil {
		return res, err
	}
	s.log.InfoContext(ctx, "knowledge ingest", "tenant_id", tenant, "chunks", res.Chunks, "replaced", res.Replaced,
		"content_len", len(content))
	return res, nil
}

// knowledgeSource validates a source name: 1 to 512 characters, not only white space, no
// control characters.
func knowledgeSource(f *apierror.Fields, v *string) string {
	switch {
	case v == nil:
		f.Add("source", "is required")
	case memory.CharCount(*v) < 1 || memory.CharCount(*v) > knowledgeSourceMaxChars ||
		strings.TrimSpace(*v) == "" || hasControl(*v):
		f.Addf("source", "must be 1 to %d printable characters, not only white space", knowledgeSourceMaxChars)
	default:
		return *v
	}
	return ""
}

// knowledgeTenant is the tenant whose knowledge base a request touches: a service names it
// (default ""), a user has its token's and may only repeat it.
func (c *call) knowledgeTenant(tenantID *string, f *apierror.Fields) (string, error) {
	if !tenantField(f, tenantID) {
		return "", nil
	}
	if c.principal.IsService() {
		if tenantID != nil {
			return *tenantID, nil
		}
		return "", nil
	}
	if tenantID != nil && *tenantID != c.principal.TenantID {
		return "", apierror.New(apierror.Forbidden, "tenant_id may name only the caller's tenant")
	}
	return c.principal.TenantID, nil
}
