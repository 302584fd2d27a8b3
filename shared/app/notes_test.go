package app_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
)

// An edit that would take the notes over their limit (in characters, not bytes) is refused,
// naming the limit and the size it would reach, and changes nothing; removing a section never
// is.
func TestNotesSizeLimit(t *testing.T) {
	t.Parallel()
	a, _ := newApp(t)
	ctx, u := context.Background(), user()
	limit := memory.DefaultNotesMaxChars
	edit := func(op string, in app.NotesInput) (app.Notes, error) { return a.EditNotes(ctx, u, op, in) }
	if _, err := edit(memory.NotesOverwrite, app.NotesInput{Content: ptr(strings.Repeat("é", limit))}); err != nil {
		t.Fatalf("notes of the limit's characters: %v", err)
	}
	if _, err := edit(memory.NotesOverwrite, app.NotesInput{Content: ptr(strings.Repeat("a", limit-11) + "\n## S\nbody\n")}); err != nil {
		t.Fatal(err)
	}
	before := readNotes(t, a, u)
	for _, tt := range []struct {
		op    string
		in    app.NotesInput
		reach int
	}{
		{memory.NotesOverwrite, app.NotesInput{Content: ptr(strings.Repeat("b", limit+1))}, limit + 1},
		{memory.NotesAppend, app.NotesInput{Content: ptr("12")}, limit + 2},
		{memory.NotesPrepend, app.NotesInput{Content: ptr("1234\n")}, limit + 5},
		{memory.NotesReplaceSection, app.NotesInput{Section: ptr("S"), Content: ptr("longer body")}, limit + 7},
		{memory.NotesReplaceSection, app.NotesInput{Section: ptr("New"), Content: ptr("x")}, limit + 10},
	} {
		_, err := edit(tt.op, tt.in)
		wantField(t, tt.op, err, "content")
		if d := app.Problem(err).Detail; !strings.Contains(d, fmt.Sprint(limit)) || !strings.Contains(d, fmt.Sprint(tt.reach)) {
			t.Errorf("%s: detail %q does not name both the limit %d and the size %d", tt.op, d, limit, tt.reach)
		}
	}
	if readNotes(t, a, u) != before {
		t.Fatal("refused writes changed the notes")
	}
	if n, err := edit(memory.NotesDeleteSection, app.NotesInput{Section: ptr("S")}); err != nil || n.Chars != limit-10 {
		t.Fatalf("after delete_section: %d characters, %v", n.Chars, err)
	}
}

// The notes operations refuse content, a section or an agent out of their rules, naming the
// field, and a content or section where the operation takes none; nothing changes.
func TestNotesRefuseBadInput(t *testing.T) {
	t.Parallel()
	a, _ := newApp(t)
	ctx, u := context.Background(), user()
	if _, err := a.EditNotes(ctx, u, memory.NotesOverwrite, app.NotesInput{Content: ptr("## A\nx\n")}); err != nil {
		t.Fatal(err)
	}
	before := readNotes(t, a, u)
	edit := func(op string, in app.NotesInput) func() error {
		return func() error { _, err := a.EditNotes(ctx, u, op, in); return err }
	}
	for _, tc := range []struct {
		name  string
		call  func() error
		field string
	}{
		{"overwrite without content", edit(memory.NotesOverwrite, app.NotesInput{}), "content"},
		{"append without content", edit(memory.NotesAppend, app.NotesInput{}), "content"},
		{"append of nothing", edit(memory.NotesAppend, app.NotesInput{Content: ptr("")}), "content"},
		{"prepend of nothing", edit(memory.NotesPrepend, app.NotesInput{Content: ptr("")}), "content"},
		{"replace_section without section", edit(memory.NotesReplaceSection, app.NotesInput{Content: ptr("x")}), "section"},
		{"replace_section without content", edit(memory.NotesReplaceSection, app.NotesInput{Section: ptr("A")}), "content"},
		{"blank section", edit(memory.NotesDeleteSection, app.NotesInput{Section: ptr("  ")}), "section"},
		{"section of hashes only", edit(memory.NotesDeleteSection, app.NotesInput{Section: ptr("##")}), "section"},
		{"section of two lines", edit(memory.NotesDeleteSection, app.NotesInput{Section: ptr("A\nB")}), "section"},
		{"section too long", edit(memory.NotesDeleteSection, app.NotesInput{Section: ptr(strings.Repeat("s", 513))}), "section"},
		{"content with read", func() error { _, err := a.ReadNotes(ctx, u, app.NotesInput{Content: ptr("x")}); return err }, "content"},
		{"content with delete_section", edit(memory.NotesDeleteSection, app.NotesInput{Section: ptr("A"), Content: ptr("x")}), "content"},
		{"section with append", edit(memory.NotesAppend, app.NotesInput{Section: ptr("A"), Content: ptr("x")}), "section"},
		{"section with clear", func() error { _, err := a.ClearNotes(ctx, u, app.NotesInput{Section: ptr("A")}); return err }, "section"},
		{"bad agent", func() error { _, err := a.ClearNotes(ctx, u, app.NotesInput{Agent: ptr("no spaces")}); return err }, "agent"},
		{"empty agent", edit(memory.NotesAppend, app.NotesInput{Agent: ptr(""), Content: ptr("x")}), "agent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantField(t, tc.name, tc.call(), tc.field)
		})
	}
	if _, err := a.EditNotes(ctx, u, memory.NotesAppend, app.NotesInput{Content: ptr("a\x00b")}); err == nil || app.Problem(err).Code != "invalid_request" {
		t.Errorf("NUL in content: %v, want invalid_request", err)
	}
	if after := readNotes(t, a, u); after != before {
		t.Fatalf("bad requests changed the notes:\n%s\n%s", before, after)
	}
}

// readNotes is the content of u's notes of the default agent.
func readNotes(t *testing.T, a *app.App, u auth.Principal) string {
	t.Helper()
	n, err := a.ReadNotes(context.Background(), u, app.NotesInput{})
	if err != nil {
		t.Fatal(err)
	}
	return n.Content
}
