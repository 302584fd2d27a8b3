package app

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/knowledge"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// Limits of knowledge.
const (
	knowledgeSourceMaxChars = 512
	// knowledgeContentMaxBytes bounds a document: what one request body can carry, whichever
	// way it comes in.
	knowledgeContentMaxBytes = MaxRequestBytes
)

// The operations of knowledge.
const (
	KnowledgeOpIngest = "ingest"
	KnowledgeOpSearch = "search"
	KnowledgeOpDelete = "delete"
)

// KnowledgeIngestInput is the request of knowledge ingest.
type KnowledgeIngestInput struct {
	Op       string          `json:"op"`
	TenantID *string         `json:"tenant_id"`
	Source   *string         `json:"source"`
	Content  *string         `json:"content"`
	Metadata json.RawMessage `json:"metadata"`
}

// KnowledgeSearchInput is the request of knowledge search.
type KnowledgeSearchInput struct {
	Op       string  `json:"op"`
	TenantID *string `json:"tenant_id"`
	Query    *string `json:"query"`
	K        *int64  `json:"k"`
	Mode     *string `json:"mode"`
}

// KnowledgeDeleteInput is the request of knowledge delete.
type KnowledgeDeleteInput struct {
	Op       string  `json:"op"`
	TenantID *string `json:"tenant_id"`
	Source   *string `json:"source"`
}

// KnowledgeDeleted is the answer of knowledge delete.
type KnowledgeDeleted struct {
	Source   string `json:"source"`
	TenantID string `json:"tenant_id"`
	Deleted  int64  `json:"deleted"`
}

// The knowledge operations keep the tenant's shared knowledge base: documents split into chunks, searched by
// every user of the tenant. It is not per user: a user token reads its own tenant's knowledge
// (app_metadata.tenant_id, or the tenant-less knowledge base when the token has none); a
// service caller names tenant_id (default "", the tenant-less one). A user naming another
// tenant is forbidden.
//
//   - ingest {source, content, metadata?} (service callers only): splits content
//     into chunks of at most 1,000 characters overlapping by up to 150, cut at paragraphs, then
//     sentences, then words (a word is cut only when it alone is longer than a chunk), embeds
//     them and replaces every chunk of an earlier ingest of the same source in one transaction:
//     a concurrent search sees the old document or the new one, never a mix, never none.
//     source is 1 to 512 characters without control characters; content must hold some
//     non-white-space text (up to what a 1 MiB body carries); metadata is a JSON object of up to
//     16 KiB stored with every chunk. {source, tenant_id, chunks, replaced}.
//   - search {query, k?, mode?}: query 1 to 4,096 characters, k 1 to 100 (default 10), mode
//     hybrid (default), vector or text, ranked as recall ranks memories. {results: [{id,
//     source, chunk_index, content, score, metadata}]}, best first.
//   - delete {source} (service callers only): removes every chunk of the source. {source,
//     tenant_id, deleted: n}; not found when the tenant has no such source, as deleting a missing key
//     of user-memory is.
//
// KnowledgeOpAllowed says whether caller p may run op at all; the functions ask before they
// read the request.
func KnowledgeOpAllowed(p auth.Principal, op string) error {
	if op != KnowledgeOpSearch && !p.IsService() {
		return apierror.Newf(apierror.Forbidden, "knowledge %s is for service callers only", op)
	}
	return nil
}

// KnowledgeIngest ingests a document for a service caller (see IngestKnowledge).
func (a *App) KnowledgeIngest(ctx context.Context, p auth.Principal, req KnowledgeIngestInput) (memory.IngestResult, error) {
	if err := KnowledgeOpAllowed(p, KnowledgeOpIngest); err != nil {
		return memory.IngestResult{}, err
	}
	var f apierror.Fields
	tenant, err := knowledgeTenant(p, req.TenantID, &f)
	if err != nil {
		return memory.IngestResult{}, err
	}
	knowledgeSource(&f, req.Source)
	if req.Content == nil {
		f.Add("content", "is required")
	}
	md := objectField(&f, "metadata", req.Metadata, maxMetadataBytes)
	if err := f.Err(); err != nil {
		return memory.IngestResult{}, err
	}
	return a.IngestKnowledge(ctx, tenant, *req.Source, *req.Content, md)
}

// KnowledgeResults is the answer of knowledge search.
type KnowledgeResults struct {
	Results []memory.KnowledgeHit `json:"results"`
}

// SearchKnowledge searches the caller's tenant's knowledge base.
func (a *App) SearchKnowledge(ctx context.Context, pr auth.Principal, req KnowledgeSearchInput) (KnowledgeResults, error) {
	var f apierror.Fields
	tenant, err := knowledgeTenant(pr, req.TenantID, &f)
	if err != nil {
		return KnowledgeResults{}, err
	}
	p := store.KnowledgeSearchParams{TenantID: tenant}
	if !pr.IsService() {
		p.UserID = pr.UserID
	}
	p.Query, p.K, p.Mode = searchFields(&f, req.Query, req.K, req.Mode)
	if err := f.Err(); err != nil {
		return KnowledgeResults{}, err
	}
	if p.QueryVector, err = a.EmbedQuery(ctx, p.Query, p.Mode); err != nil {
		return KnowledgeResults{}, err
	}
	p.Model = a.cfg.Embedder.Model()
	hits, err := a.store.SearchKnowledge(ctx, p)
	return KnowledgeResults{Results: hits}, err
}

// DeleteKnowledge removes every chunk of a source, for a service caller.
func (a *App) DeleteKnowledge(ctx context.Context, p auth.Principal, req KnowledgeDeleteInput) (KnowledgeDeleted, error) {
	if err := KnowledgeOpAllowed(p, KnowledgeOpDelete); err != nil {
		return KnowledgeDeleted{}, err
	}
	var f apierror.Fields
	tenant, err := knowledgeTenant(p, req.TenantID, &f)
	if err != nil {
		return KnowledgeDeleted{}, err
	}
	source := knowledgeSource(&f, req.Source)
	if err := f.Err(); err != nil {
		return KnowledgeDeleted{}, err
	}
	n, err := a.store.DeleteKnowledge(ctx, tenant, source)
	if err != nil {
		return KnowledgeDeleted{}, err
	}
	a.log.InfoContext(ctx, "knowledge delete", "tenant_id", tenant, "chunks", n)
	return KnowledgeDeleted{Source: source, TenantID: tenant, Deleted: n}, nil
}

// IngestKnowledge splits a document, embeds it and stores it in a tenant's knowledge base in
// place of any earlier ingest of the same source. It applies the limits of the knowledge
// function, whatever the caller: the operator command ingests files through it.
func (a *App) IngestKnowledge(ctx context.Context, tenant, source, content string, metadata json.RawMessage) (memory.IngestResult, error) {
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
		return memory.IngestResult{}, err
	}
	texts := make([]string, len(chunks))
	for i, ch := range chunks {
		texts[i] = ch.Content
	}
	vectors, err := a.EmbedChunks(ctx, texts)
	if err != nil {
		return memory.IngestResult{Source: source, TenantID: tenant, Chunks: len(texts)}, err
	}
	res, err := a.store.IngestKnowledge(ctx, store.IngestParams{TenantID: tenant, Source: source, Chunks: texts,
		Metadata: metadata, Vectors: vectors, Model: a.cfg.Embedder.Model()})
	if err != nil {
		return res, err
	}
	a.log.InfoContext(ctx, "knowledge ingest", "tenant_id", tenant, "chunks", res.Chunks, "replaced", res.Replaced,
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
func knowledgeTenant(p auth.Principal, tenantID *string, f *apierror.Fields) (string, error) {
	if !tenantField(f, tenantID) {
		return "", nil
	}
	if p.IsService() {
		if tenantID != nil {
			return *tenantID, nil
		}
		return "", nil
	}
	if tenantID != nil && *tenantID != p.TenantID {
		return "", apierror.New(apierror.Forbidden, "tenant_id may name only the caller's tenant")
	}
	return p.TenantID, nil
}

// embedBatch is the most texts sent to the embedder in one call: a model server takes bounded
// batches, and a large document has a thousand chunks.
const embedBatch = 64

// EmbedChunks embeds a document's chunks before any transaction (no lock is held while a model
// works), embedBatch at a time within embedShare of the request's time. When the provider
// fails, the chunks not yet embedded get no vector (full-text search finds them) and
// EmbedPending embeds them later; only a caller that gave up (ctx done) fails the ingest.
func (a *App) EmbedChunks(ctx context.Context, chunks []string) ([]*string, error) {
	vectors := make([]*string, len(chunks))
	ectx, cancel := embedBudget(ctx)
	defer cancel()
	for i := 0; i < len(chunks); i += embedBatch {
		vs, err := a.embedVectors(ectx, chunks[i:min(i+embedBatch, len(chunks))])
		if err != nil {
			a.log.WarnContext(ctx, "embedding failed; chunks stored without vectors", "chunks", len(chunks)-i,
				"error", errText(err))
			break // the provider failed: the rest waits for EmbedPending
		}
		copy(vectors[i:], vs)
	}
	return vectors, callerGone(ctx)
}
