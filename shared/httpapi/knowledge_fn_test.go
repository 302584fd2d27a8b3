package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/knowledge"
)

// knTenant is a tenant of its own, so a test's knowledge base holds only what it ingests.
func knTenant() string { return "kn-" + uuid.NewString() }

// knDoc is a document of paragraphs of about 880 characters, each a chunk of its own; every
// chunk holds the word "zebra", so a text search finds all of them.
func knDoc(version, paragraphs int) string {
	ps := make([]string, paragraphs)
	for p := range ps {
		var b strings.Builder
		for b.Len() < 820 {
			fmt.Fprintf(&b, "Zebra handbook version %d paragraph %d explains the refund policy. ", version, p)
		}
		ps[p] = strings.TrimSpace(b.String())
	}
	return strings.Join(ps, "\n\n")
}

func TestKnowledgeIngestSearchDelete(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	svc := e.serviceToken()
	tenant, other := knTenant(), knTenant()
	u := e.newUser(tenant)
	stranger := e.newUser(other)

	doc := "# Returns\n\nRefunds are paid within five working days of receiving the parcel.\n\n" +
		"# Shipping\n\nShipping is free for orders over fifty euros. " + strings.Repeat("Parcels travel by lorry and by train. ", 40)
	r := e.call(svc, "knowledge", map[string]any{"op": "ingest", "tenant_id": tenant, "source": "docs/policies.md",
		"content": doc, "metadata": map[string]any{"lang": "en"}}).must(t, http.StatusCreated)
	chunks := int(r.body["chunks"].(float64))
	if r.body["source"] != "docs/policies.md" || r.body["tenant_id"] != tenant || chunks < 2 || r.body["replaced"] != 0.0 {
		t.Fatalf("ingest: %s", r.raw)
	}
	if n := e.count("knowledge_chunks", "tenant_id = $1", tenant); n != chunks {
		t.Fatalf("%d rows stored, answer says %d", n, chunks)
	}
	e.call(svc, "knowledge", map[string]any{"op": "ingest", "tenant_id": tenant, "source": "docs/other.md",
		"content": "Opening hours are nine to five."}).must(t, http.StatusCreated)

	// A user of the tenant finds it, best first, with every field.
	r = e.call(u.token, "knowledge", map[string]any{"op": "search", "query": "how long do refunds take?", "k": 3}).must(t, http.StatusOK)
	res := list(r.body["results"])
	if len(res) == 0 || len(res) > 3 {
		t.Fatalf("search: %s", r.raw)
	}
	top := obj(res[0])
	if top["source"] != "docs/policies.md" || !strings.Contains(str(top["content"]), "Refunds are paid") ||
		top["chunk_index"] != 0.0 || obj(top["metadata"])["lang"] != "en" || str(top["id"]) == "" {
		t.Errorf("top result: %v", top)
	}
	for i := 1; i < len(res); i++ {
		if obj(res[i])["score"].(float64) > obj(res[i-1])["score"].(float64) {
			t.Errorf("results not best first: %s", r.raw)
		}
	}
	for _, mode := range []string{"text", "vector"} {
		r = e.call(u.token, "knowledge", map[string]any{"op": "search", "query": "opening hours", "mode": mode}).must(t, http.StatusOK)
		if res := list(r.body["results"]); len(res) == 0 || obj(res[0])["source"] != "docs/other.md" {
			t.Errorf("%s search: %s", mode, r.raw)
		}
	}
	// A user may repeat their own tenant, not name another.
	e.call(u.token, "knowledge", map[string]any{"op": "search", "query": "refunds", "tenant_id": tenant}).must(t, http.StatusOK)
	if r := e.call(u.token, "knowledge", map[string]any{"op": "search", "query": "refunds", "tenant_id": other}).must(t, http.StatusForbidden); r.problemCode() != "forbidden" {
		t.Errorf("naming another tenant: %s", r.raw)
	}
	// Another tenant's users, and the tenant-less knowledge base, see none of it.
	for _, tok := range []string{stranger.token, e.newUser("").token} {
		r = e.call(tok, "knowledge", map[string]any{"op": "search", "query": "refunds zebra opening hours"}).must(t, http.StatusOK)
		for _, h := range list(r.body["results"]) {
			if strings.HasPrefix(str(obj(h)["source"]), "docs/") {
				t.Errorf("another tenant sees %v", h)
			}
		}
	}
	// A service caller searches the tenant it names.
	r = e.call(svc, "knowledge", map[string]any{"op": "search", "query": "refunds", "tenant_id": tenant}).must(t, http.StatusOK)
	if len(list(r.body["results"])) == 0 {
		t.Errorf("service search: %s", r.raw)
	}
	r = e.call(svc, "knowledge", map[string]any{"op": "search", "query": "refunds", "tenant_id": other}).must(t, http.StatusOK)
	if len(list(r.body["results"])) != 0 {
		t.Errorf("service search of an empty tenant: %s", r.raw)
	}

	// Delete: the count, then 404, and the source is gone from searches.
	r = e.call(svc, "knowledge", map[string]any{"op": "delete", "tenant_id": tenant, "source": "docs/policies.md"}).must(t, http.StatusOK)
	if r.body["deleted"] != float64(chunks) || r.body["source"] != "docs/policies.md" {
		t.Errorf("delete: %s", r.raw)
	}
	if r := e.call(svc, "knowledge", map[string]any{"op": "delete", "tenant_id": tenant, "source": "docs/policies.md"}).must(t, http.StatusNotFound); r.problemCode() != "not_found" {
		t.Errorf("second delete: %s", r.raw)
	}
	// The same source in another tenant is another document.
	e.call(svc, "knowledge", map[string]any{"op": "delete", "tenant_id": other, "source": "docs/other.md"}).must(t, http.StatusNotFound)
	r = e.call(u.token, "knowledge", map[string]any{"op": "search", "query": "refunds parcels shipping", "k": 100}).must(t, http.StatusOK)
	for _, h := range list(r.body["results"]) {
		if obj(h)["source"] != "docs/other.md" {
			t.Errorf("deleted source still found: %v", h)
		}
	}
	if n := e.count("knowledge_chunks", "tenant_id = $1", tenant); n != 1 {
		t.Errorf("%d chunks left, want 1", n)
	}
	// Ingest without tenant_id writes the tenant-less knowledge base.
	src := "kn-" + uuid.NewString()
	e.call(svc, "knowledge", map[string]any{"op": "ingest", "source": src, "content": "Tenant-less fact."}).must(t, http.StatusCreated)
	if n := e.count("knowledge_chunks", "tenant_id = '' and source = $1", src); n != 1 {
		t.Errorf("tenant-less ingest stored %d chunks", n)
	}
	e.call(svc, "knowledge", map[string]any{"op": "delete", "source": src}).must(t, http.StatusOK)

	// Neither the document nor the queries reach the log.
	for _, secret := range []string{"Refunds are paid", "Opening hours", "how long do refunds", "docs/policies.md"} {
		if strings.Contains(e.logBuf.String(), secret) {
			t.Errorf("the log holds %q", secret)
		}
	}
}

func TestKnowledgeBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	svc := e.serviceToken()
	u := e.newUser(knTenant())
	tests := []callCase{
		{"user may not ingest", u.token, map[string]any{"op": "ingest", "source": "a", "content": "b"}, 403, ""},
		{"user may not delete", u.token, map[string]any{"op": "delete", "source": "a"}, 403, ""},
		{"user ingest is 403 before validation", u.token, map[string]any{"op": "ingest"}, 403, ""},
		{"no op", svc, map[string]any{"source": "a"}, 400, "op"},
		{"unknown op", svc, map[string]any{"op": "list"}, 400, "op"},
		{"op is case-sensitive", svc, map[string]any{"op": "Search", "query": "x"}, 400, "op"},
		{"missing source", svc, map[string]any{"op": "ingest", "content": "b"}, 400, "source"},
		{"missing content", svc, map[string]any{"op": "ingest", "source": "a"}, 400, "content"},
		{"empty content", svc, map[string]any{"op": "ingest", "source": "a", "content": ""}, 400, "content"},
		{"blank content", svc, map[string]any{"op": "ingest", "source": "a", "content": " \n\n\t "}, 400, "content"},
		{"empty source", svc, map[string]any{"op": "ingest", "source": "", "content": "b"}, 400, "source"},
		{"blank source", svc, map[string]any{"op": "ingest", "source": "   ", "content": "b"}, 400, "source"},
		{"source too long", svc, map[string]any{"op": "ingest", "source": strings.Repeat("é", 513), "content": "b"}, 400, "source"},
		{"source with a control character", svc, map[string]any{"op": "ingest", "source": "a\nb", "content": "b"}, 400, "source"},
		{"metadata not an object", svc, map[string]any{"op": "ingest", "source": "a", "content": "b", "metadata": []int{1}}, 400, "metadata"},
		{"metadata too large", svc, map[string]any{"op": "ingest", "source": "a", "content": "b", "metadata": map[string]any{"x": strings.Repeat("y", 17<<10)}}, 400, "metadata"},
		{"content of the wrong type", svc, map[string]any{"op": "ingest", "source": "a", "content": 12}, 400, "content"},
		{"a field of another op", svc, map[string]any{"op": "ingest", "source": "a", "content": "b", "query": "x"}, 400, "query"},
		{"a field of another op on search", svc, map[string]any{"op": "search", "query": "x", "source": "a"}, 400, "source"},
		{"user_id is not a knowledge field", svc, map[string]any{"op": "search", "query": "x", "user_id": uuid.NewString()}, 400, "user_id"},
		{"NUL in content", svc, `{"op":"ingest","source":"a","content":"b\u0000c"}`, 400, ""},
		{"missing query", u.token, map[string]any{"op": "search"}, 400, "query"},
		{"empty query", u.token, map[string]any{"op": "search", "query": ""}, 400, "query"},
		{"query too long", u.token, map[string]any{"op": "search", "query": strings.Repeat("q", 4097)}, 400, "query"},
		{"k zero", u.token, map[string]any{"op": "search", "query": "x", "k": 0}, 400, "k"},
		{"k too big", u.token, map[string]any{"op": "search", "query": "x", "k": 101}, 400, "k"},
		{"bad mode", u.token, map[string]any{"op": "search", "query": "x", "mode": "fuzzy"}, 400, "mode"},
		{"tenant_id too long", svc, map[string]any{"op": "search", "query": "x", "tenant_id": strings.Repeat("t", 129)}, 400, "tenant_id"},
		{"tenant_id of 128 characters", svc, map[string]any{"op": "search", "query": "x", "tenant_id": strings.Repeat("é", 128)}, 200, ""},
		{"delete without source", svc, map[string]any{"op": "delete"}, 400, "source"},
		{"delete a missing source", svc, map[string]any{"op": "delete", "tenant_id": knTenant(), "source": "nope"}, 404, ""},
		{"no token", "", map[string]any{"op": "search", "query": "x"}, 401, ""},
	}
	runCallCases(t, e, "knowledge", tests)
}

// A document as large as a request can carry is split into chunks no longer than the chunk
// size, each stored and searchable.
func TestKnowledgeLargeDocument(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: ingests a document as large as a request")
	}
	e := newEnv(t, false)
	svc := e.serviceToken()
	tenant := knTenant()
	var b strings.Builder
	for i := 0; b.Len() < 1000*1000; i++ {
		fmt.Fprintf(&b, "Section %d of the manual describes part number %d in detail. ", i, i*7)
		if i%40 == 39 {
			b.WriteString("\n\n")
		}
	}
	r := e.call(svc, "knowledge", map[string]any{"op": "ingest", "tenant_id": tenant, "source": "manual.txt",
		"content": b.String()}).must(t, http.StatusCreated)
	chunks := int(r.body["chunks"].(float64))
	if chunks < 1000 {
		t.Errorf("%d chunks for %d bytes", chunks, b.Len())
	}
	var longest int
	conn := e.adminConn()
	defer conn.Close(t.Context())
	if err := conn.QueryRow(t.Context(), `select max(char_length(content)) from agentmem.knowledge_chunks where tenant_id = $1`,
		tenant).Scan(&longest); err != nil {
		t.Fatal(err)
	}
	if longest > 1000 {
		t.Errorf("a chunk has %d characters", longest)
	}
	r = e.call(svc, "knowledge", map[string]any{"op": "search", "tenant_id": tenant, "query": "7007", "mode": "text", "k": 5}).must(t, http.StatusOK)
	if res := list(r.body["results"]); len(res) == 0 || !strings.Contains(string(r.raw), "Section 1001 of the manual describes part number 7007 in detail.") {
		t.Errorf("search in a large document: %.300s", r.raw)
	}
	// Over the body limit: 413, nothing stored.
	big := strings.Repeat("word ", 220_000)
	e.call(svc, "knowledge", map[string]any{"op": "ingest", "tenant_id": tenant, "source": "big.txt", "content": big}).must(t, http.StatusRequestEntityTooLarge)
	if n := e.count("knowledge_chunks", "tenant_id = $1 and source = 'big.txt'", tenant); n != 0 {
		t.Errorf("an oversized ingest stored %d chunks", n)
	}
}

// Re-ingesting a source replaces it atomically: a reader searching all along sees exactly one
// version's chunks every time, never a mix and never nothing, and concurrent re-ingests of one
// source leave exactly one version.
func TestKnowledgeReingestIsAtomic(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	svc := e.serviceToken()
	tenant := knTenant()
	u := e.newUser(tenant)
	// Versions differ in their number of chunks, so a mix or a missing chunk shows.
	paragraphs := func(v int) int { return 2 + v%4 }
	ingest := func(v int) response {
		return e.call(svc, "knowledge", map[string]any{"op": "ingest", "tenant_id": tenant, "source": "handbook.md",
			"content": knDoc(v, paragraphs(v)), "metadata": map[string]any{"version": v}})
	}
	chunksOf := sync.Map{} // version -> chunk count
	r := ingest(0).must(t, http.StatusCreated)
	chunksOf.Store(0, int(r.body["chunks"].(float64)))

	var done atomic.Bool
	var searches atomic.Int64
	errs := make(chan string, 100)
	var wg sync.WaitGroup
	for _, mode := range []string{"hybrid", "text"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() {
				r := e.call(u.token, "knowledge", map[string]any{"op": "search", "query": "zebra handbook refund", "k": 100, "mode": mode})
				if r.status != http.StatusOK {
					errs <- fmt.Sprintf("search: %d %s", r.status, r.raw)
					return
				}
				searches.Add(1)
				res := list(r.body["results"])
				if len(res) == 0 {
					errs <- mode + " search found nothing during a re-ingest"
					return
				}
				version := obj(obj(res[0])["metadata"])["version"]
				for _, h := range res {
					if v := obj(obj(h)["metadata"])["version"]; v != version {
						errs <- fmt.Sprintf("%s search mixes versions %v and %v", mode, version, v)
						return
					}
				}
				want, ok := chunksOf.Load(int(version.(float64)))
				if ok && len(res) != want.(int) {
					errs <- fmt.Sprintf("%s search found %d chunks of version %v, which has %d", mode, len(res), version, want)
					return
				}
			}
		}()
	}
	for v := 1; v <= 24; v++ {
		// Record the count before the reader can see the version (it is a function of v).
		chunksOf.Store(v, len(knowledge.Split(knDoc(v, paragraphs(v)), knowledge.Options{})))
		r := ingest(v).must(t, http.StatusCreated)
		if got, _ := chunksOf.Load(v); int(r.body["chunks"].(float64)) != got.(int) {
			t.Fatalf("version %d: %s", v, r.raw)
		}
	}
	// Two writers at once: the second waits for the first and replaces it whole.
	var wwg sync.WaitGroup
	for v := 25; v <= 30; v++ {
		chunksOf.Store(v, len(knowledge.Split(knDoc(v, paragraphs(v)), knowledge.Options{})))
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			if r := ingest(v); r.status != http.StatusCreated {
				errs <- fmt.Sprintf("concurrent ingest: %d %s", r.status, r.raw)
			}
		}()
	}
	wwg.Wait()
	// Only the searches that ran while the documents were being replaced count; then the
	// searchers read the last version too (a poll, not a sleep: if a searcher stopped on an
	// error the wait ends at its deadline, and the error is reported below).
	during := searches.Load()
	for deadline := time.Now().Add(10 * time.Second); searches.Load() < during+2 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	done.Store(true)
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	if during < 10 {
		t.Errorf("only %d searches ran during the re-ingests", during)
	}
	conn := e.adminConn()
	defer conn.Close(t.Context())
	var rows, versions, maxIndex int
	var version int
	if err := conn.QueryRow(t.Context(), `select count(*), count(distinct metadata->>'version'), max(chunk_index),
		min((metadata->>'version')::int) from agentmem.knowledge_chunks where tenant_id = $1`, tenant).
		Scan(&rows, &versions, &maxIndex, &version); err != nil {
		t.Fatal(err)
	}
	want, _ := chunksOf.Load(version)
	if versions != 1 || rows != want.(int) || maxIndex != rows-1 {
		t.Errorf("after concurrent ingests: %d rows of %d versions (max index %d); version %d has %v chunks",
			rows, versions, maxIndex, version, want)
	}
}

// A chunk or a query without a single word has a zero embedding, whose cosine distance is not a
// number: it ranks nowhere, as in recall. A query without words finds nothing in any mode; a
// chunk without words is never found by its vector.
func TestKnowledgeTextWithoutWords(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	svc := e.serviceToken()
	tenant := knTenant()
	u := e.newUser(tenant)
	e.call(svc, "knowledge", map[string]any{"op": "ingest", "tenant_id": tenant, "source": "rule.md", "content": "--- *** ---"}).must(t, http.StatusCreated)
	e.call(svc, "knowledge", map[string]any{"op": "ingest", "tenant_id": tenant, "source": "words.md", "content": "Plain words."}).must(t, http.StatusCreated)
	for _, mode := range []string{"vector", "hybrid", "text"} {
		for _, caller := range []struct {
			name, token string
			tenant      any
		}{{"user", u.token, nil}, {"service", svc, tenant}} {
			t.Run(caller.name, func(t *testing.T) {
				body := map[string]any{"op": "search", "query": "???", "mode": mode}
				if caller.tenant != nil {
					body["tenant_id"] = caller.tenant
				}
				r := e.call(caller.token, "knowledge", body).must(t, http.StatusOK)
				if res, ok := r.body["results"].([]any); !ok || len(res) != 0 {
					t.Errorf("%s, %s: \"???\" found %s", caller.name, mode, r.raw)
				}
			})
		}
		r := e.call(u.token, "knowledge", map[string]any{"op": "search", "query": "plain", "mode": mode}).must(t, http.StatusOK)
		for _, h := range list(r.body["results"]) {
			if src := obj(h)["source"]; src != "words.md" {
				t.Errorf("%s \"plain\" found %v: %s", mode, src, r.raw)
			}
		}
		if len(list(r.body["results"])) != 1 {
			t.Errorf("%s \"plain\": %s", mode, r.raw)
		}
	}
}
