package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// umNotes is the read answer of an agent's notes, to compare before and after.
func umNotes(e *env, u user, agent string) string {
	e.t.Helper()
	return string(e.call(u.token, "notes", map[string]any{"op": "read", "agent": agent}).must(e.t, http.StatusOK).raw)
}

// umNotesDo runs one notes op and returns the response.
func umNotesDo(e *env, u user, body map[string]any) response {
	e.t.Helper()
	return e.call(u.token, "notes", body)
}

func TestNotesReadBeforeAnyWrite(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	r := umNotesDo(e, u, map[string]any{"op": "read"}).must(t, http.StatusOK)
	if str(r.body["agent"]) != "default" || r.body["content"] != "" || r.body["updated_at"] != nil ||
		r.body["chars"] != float64(0) || r.body["max_chars"] != float64(memory.DefaultNotesMaxChars) {
		t.Fatalf("read: %s", r.raw)
	}
	if _, ok := r.body["updated_at"]; !ok {
		t.Fatalf("read lacks updated_at: %s", r.raw)
	}
	if n := e.count("notes", "user_id = $1", u.id); n != 0 {
		t.Fatalf("read created %d rows", n)
	}
}

func TestNotesEdits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	do := func(status int, body map[string]any) response {
		t.Helper()
		body["agent"] = "bot"
		return umNotesDo(e, u, body).must(t, status)
	}
	content := func(r response) string {
		t.Helper()
		c, ok := r.body["content"].(string)
		if !ok {
			t.Fatalf("no content: %s", r.raw)
		}
		if r.body["chars"] != float64(len([]rune(c))) || str(r.body["updated_at"]) == "" || str(r.body["agent"]) != "bot" {
			t.Fatalf("bad notes body: %s", r.raw)
		}
		return c
	}

	// The first write creates the notes: 201; later ones 200.
	if c := content(do(http.StatusCreated, map[string]any{"op": "append", "content": "- likes tea"})); c != "- likes tea" {
		t.Fatalf("append to none: %q", c)
	}
	if c := content(do(http.StatusOK, map[string]any{"op": "append", "content": "- metric units\n"})); c != "- likes tea\n- metric units\n" {
		t.Fatalf("append joins on a line break: %q", c)
	}
	if c := content(do(http.StatusOK, map[string]any{"op": "prepend", "content": "# Ada"})); c != "# Ada\n- likes tea\n- metric units\n" {
		t.Fatalf("prepend: %q", c)
	}

	doc := "# Ada\r\nIntro  \r\n\r\n## Preferences\n- tea\n### Food\n- soup\n\n## Goals\n```\n## not a heading\n```\n- learn Go\n\n## Ünïcödé 🙂\nlast"
	if c := content(do(http.StatusOK, map[string]any{"op": "overwrite", "content": doc})); c != doc {
		t.Fatalf("overwrite: %q", c)
	}
	if c := content(do(http.StatusOK, map[string]any{"op": "read"})); c != doc {
		t.Fatalf("read after overwrite changed bytes: %q", c)
	}

	// replace_section keeps the heading and every byte outside the section.
	r := do(http.StatusOK, map[string]any{"op": "replace_section", "section": "Preferences", "content": "- coffee"})
	want := "# Ada\r\nIntro  \r\n\r\n## Preferences\n- coffee\n\n## Goals\n```\n## not a heading\n```\n- learn Go\n\n## Ünïcödé 🙂\nlast"
	if c := content(r); c != want || r.body["section_created"] != false {
		t.Fatalf("replace_section:\n%q\nwant\n%q (%s)", c, want, r.raw)
	}
	// By heading line, with a new heading line in the content: a rename.
	r = do(http.StatusOK, map[string]any{"op": "replace_section", "section": "## Goals", "content": "## Aims\n- ship it\n"})
	want = "# Ada\r\nIntro  \r\n\r\n## Preferences\n- coffee\n\n## Aims\n- ship it\n\n## Ünïcödé 🙂\nlast"
	if c := content(r); c != want {
		t.Fatalf("replace_section rename:\n%q\nwant\n%q", c, want)
	}
	// A heading inside a code block is no section: replace_section appends one.
	r = do(http.StatusOK, map[string]any{"op": "replace_section", "section": "Contacts", "content": "- email"})
	want += "\n\n## Contacts\n- email\n"
	if c := content(r); c != want || r.body["section_created"] != true {
		t.Fatalf("replace_section of a missing section:\n%q\nwant\n%q (%s)", c, want, r.raw)
	}

	r = do(http.StatusOK, map[string]any{"op": "delete_section", "section": "Ünïcödé 🙂"})
	want = "# Ada\r\nIntro  \r\n\r\n## Preferences\n- coffee\n\n## Aims\n- ship it\n\n## Contacts\n- email\n"
	if c := content(r); c != want {
		t.Fatalf("delete_section:\n%q\nwant\n%q", c, want)
	}
	if _, ok := r.body["section_created"]; ok {
		t.Fatalf("section_created outside replace_section: %s", r.raw)
	}

	before := umNotes(e, u, "bot")
	wantProblem(t, umNotesDo(e, u, map[string]any{"op": "delete_section", "agent": "bot", "section": "Nope"}), http.StatusNotFound, "not_found", "")
	wantProblem(t, umNotesDo(e, u, map[string]any{"op": "delete_section", "agent": "bot", "section": "### Aims"}), http.StatusNotFound, "not_found", "")
	if after := umNotes(e, u, "bot"); after != before {
		t.Fatalf("a failed delete_section changed the notes")
	}

	// Notes belong to (user, agent): the default agent has none.
	if r := umNotesDo(e, u, map[string]any{"op": "read"}).must(t, http.StatusOK); r.body["content"] != "" {
		t.Fatalf("default agent reads %s", r.raw)
	}

	if r := do(http.StatusOK, map[string]any{"op": "clear"}); r.body["deleted"] != true || str(r.body["agent"]) != "bot" {
		t.Fatalf("clear: %s", r.raw)
	}
	if r := do(http.StatusOK, map[string]any{"op": "clear"}); r.body["deleted"] != false {
		t.Fatalf("second clear: %s", r.raw)
	}
	if r := do(http.StatusOK, map[string]any{"op": "read"}); r.body["content"] != "" || r.body["updated_at"] != nil {
		t.Fatalf("read after clear: %s", r.raw)
	}
	// A missing section of absent notes: 404 and still no notes.
	wantProblem(t, umNotesDo(e, u, map[string]any{"op": "delete_section", "agent": "bot", "section": "A"}), http.StatusNotFound, "not_found", "")
	if n := e.count("notes", "user_id = $1", u.id); n != 0 {
		t.Fatalf("%d rows after a failed edit of absent notes", n)
	}
	do(http.StatusCreated, map[string]any{"op": "replace_section", "section": "A", "content": "x"})
}

// A refusal for size is rendered as 400 invalid_request naming content, its detail the limit
// and the size reached; the rule is tested on the use case (shared/app TestNotesSizeLimit).
func TestNotesSizeLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	limit := memory.DefaultNotesMaxChars
	r := umNotesDo(e, u, map[string]any{"op": "overwrite", "content": strings.Repeat("é", limit+1)})
	wantProblem(t, r, http.StatusBadRequest, "invalid_request", "content")
	if detail := str(r.body["detail"]); !strings.Contains(detail, fmt.Sprint(limit)) || !strings.Contains(detail, fmt.Sprint(limit+1)) {
		t.Fatalf("detail %q does not name both the limit %d and the size %d", detail, limit, limit+1)
	}
	if n := e.count("notes", "user_id = $1", u.id); n != 0 {
		t.Fatalf("a refused overwrite stored %d rows", n)
	}
}

// TestNotesLimitIsConfigurable checks the store's knob: the limit is a parameter of every edit.
func TestNotesLimitIsConfigurable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sc := memory.Scope{UserID: u.id.String(), Agent: "default"}
	ctx := context.Background()
	edit := func(ed memory.NotesEdit) error {
		_, err := e.store.EditNotes(ctx, store.EditNotesParams{Scope: sc, Edit: ed, MaxChars: 10})
		return err
	}
	if err := edit(memory.NotesEdit{Op: memory.NotesOverwrite, Content: "0123456789"}); err != nil {
		t.Fatal(err)
	}
	if err := edit(memory.NotesEdit{Op: memory.NotesAppend, Content: "x"}); err == nil || !strings.Contains(err.Error(), "12 characters") {
		t.Fatalf("append over a limit of 10: %v", err)
	}
	n, err := e.store.ReadNotes(ctx, sc)
	if err != nil || n.Content != "0123456789" {
		t.Fatalf("notes %q, %v", n.Content, err)
	}
}

func TestNotesConcurrentAppendsAreAllKept(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	const n = 20
	createdOnce(t, n, func(i int) response {
		return e.call(u.token, "notes", map[string]any{"op": "append", "agent": "race", "content": fmt.Sprintf("- line %02d\n", i)})
	})
	r := e.call(u.token, "notes", map[string]any{"op": "read", "agent": "race"}).must(t, http.StatusOK)
	c := str(r.body["content"])
	lines := strings.Split(strings.TrimSuffix(c, "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("%d lines, want %d: %q", len(lines), n, c)
	}
	for i := range n {
		if strings.Count(c, fmt.Sprintf("- line %02d\n", i)) != 1 {
			t.Fatalf("line %d is not there exactly once: %q", i, c)
		}
	}
}

// The notes function's body decodes into the operation's input: a missing or unknown op, an
// unknown field, a value of the wrong JSON type (null is absent) or trailing data is 400
// invalid_request and changes nothing; the operations' own rules are tested on the use cases
// (shared/app TestNotesRefuseBadInput).
func TestNotesBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	umNotesDo(e, u, map[string]any{"op": "overwrite", "content": "## A\nx\n"}).must(t, http.StatusCreated)
	before := umNotes(e, u, "default")

	tests := []struct {
		name, body, field string
	}{
		{"no op", `{"content":"x"}`, "op"},
		{"unknown op", `{"op":"write","content":"x"}`, "op"},
		{"op in the wrong case", `{"op":"Append","content":"x"}`, "op"},
		{"overwrite with null content", `{"op":"overwrite","content":null}`, "content"},
		{"content not a string", `{"op":"append","content":["x"]}`, "content"},
		{"unknown field", `{"op":"append","contents":"x"}`, "contents"},
		{"trailing data", `{"op":"clear"}]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantProblem(t, e.call(u.token, "notes", tt.body), http.StatusBadRequest, "invalid_request", tt.field)
		})
	}
	if after := umNotes(e, u, "default"); after != before {
		t.Fatalf("bad requests changed the notes:\n%s\n%s", before, after)
	}
}

func TestNotesIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	a := e.newUser("t1")
	b := e.newUser("t1")
	aOther := umUserAs(e, a.id, "t2")
	umNotesDo(e, a, map[string]any{"op": "overwrite", "content": "## Secret\nA's notes\n"}).must(t, http.StatusCreated)
	before := umNotes(e, a, "default")

	for name, other := range map[string]user{"other user": b, "other tenant": aOther} {
		t.Run(name, func(t *testing.T) {
			r := umNotesDo(e, other, map[string]any{"op": "read"}).must(t, http.StatusOK)
			if r.body["content"] != "" || r.body["updated_at"] != nil {
				t.Fatalf("reads another's notes: %s", r.raw)
			}
			wantProblem(t, umNotesDo(e, other, map[string]any{"op": "delete_section", "section": "Secret"}), http.StatusNotFound, "not_found", "")
			if r := umNotesDo(e, other, map[string]any{"op": "clear"}).must(t, http.StatusOK); r.body["deleted"] != false {
				t.Fatalf("clear: %s", r.raw)
			}
			// Their own write starts their own notes.
			r = umNotesDo(e, other, map[string]any{"op": "replace_section", "section": "Secret", "content": "mine"}).must(t, http.StatusCreated)
			if str(r.body["content"]) != "## Secret\nmine\n" {
				t.Fatalf("own notes: %s", r.raw)
			}
		})
	}
	if after := umNotes(e, a, "default"); after != before {
		t.Fatalf("others changed A's notes:\n%s\n%s", before, after)
	}

	svc := e.serviceToken()
	r := e.call(svc, "notes", map[string]any{"op": "append", "content": "- by the agent server", "user_id": a.id.String(), "tenant_id": "t1"}).must(t, http.StatusOK)
	if str(r.body["content"]) != "## Secret\nA's notes\n- by the agent server" {
		t.Fatalf("service append: %s", r.raw)
	}
	wantProblem(t, e.call(svc, "notes", map[string]any{"op": "read"}), http.StatusBadRequest, "invalid_request", "user_id")
	wantProblem(t, umNotesDo(e, a, map[string]any{"op": "read", "user_id": b.id.String()}), http.StatusForbidden, "forbidden", "")
}

// TestNotesContentStaysOutOfLogs checks that a full request logs no notes text.
func TestNotesContentStaysOutOfLogs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	const secretText = "zebra-umbrella-notes-fixture"
	umNotesDo(e, u, map[string]any{"op": "overwrite", "content": "## " + secretText + "\n" + secretText}).must(t, http.StatusCreated)
	umNotesDo(e, u, map[string]any{"op": "append", "content": strings.Repeat(secretText, 1000)}).must(t, http.StatusBadRequest)
	e.call(u.token, "user-memory", map[string]any{"op": "set", "key": secretText, "value": map[string]any{"v": secretText}}).must(t, http.StatusCreated)
	e.call(u.token, "user-state", map[string]any{"op": "set", "mode": secretText}).must(t, http.StatusCreated)
	if strings.Contains(e.logBuf.String(), secretText) {
		t.Fatalf("the log holds stored text: %s", e.logBuf.String())
	}
}
