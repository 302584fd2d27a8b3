package app

import (
	"context"
	"strings"
	"time"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// notesSectionMaxChars bounds a section name: one heading line.
const notesSectionMaxChars = 512

// The operations of notes: the edits of memory.NotesEdit, plus read and clear.
const (
	NotesOpRead  = "read"
	NotesOpClear = "clear"
)

// NotesInput is the request of every operation of notes.
type NotesInput struct {
	ActingFor
	Op      string  `json:"op"`
	Agent   *string `json:"agent"`
	Content *string `json:"content"`
	Section *string `json:"section"`
}

// Notes is the notes after read or an edit. chars counts characters (code points),
// the unit of max_chars.
type Notes struct {
	Agent     string     `json:"agent"`
	Content   string     `json:"content"`
	UpdatedAt *time.Time `json:"updated_at"`
	Chars     int        `json:"chars"`
	MaxChars  int        `json:"max_chars"`
	// SectionCreated is set by replace_section only.
	SectionCreated *bool `json:"section_created,omitempty"`
	// Created is set by an edit when the agent had no notes for the user before.
	Created bool `json:"-"`
}

// NotesCleared is the answer of clear.
type NotesCleared struct {
	Agent   string `json:"agent"`
	Deleted bool   `json:"deleted"`
}

// The notes operations keep an agent's long-term Markdown notes about the user, one text per
// (user, agent); agent defaults to "default". The section rules are memory.NotesEdit's.
//
//   - read: {agent, content, updated_at, chars, max_chars}. Notes never written read as
//     content "" and updated_at null, not not-found, so that an agent can always read before
//     writing.
//   - overwrite {content}, append {content}, prepend {content}, replace_section {section,
//     content}, delete_section {section}: the same answer as read, after the edit, with Created
//     when the agent had no notes for the user before. replace_section adds section_created,
//     true when the section did not exist and was appended at the end. append and prepend
//     need non-empty content; overwrite with "" empties the notes (clear removes them).
//   - delete_section of a section that does not exist: not found, nothing changed.
//   - clear: {agent, deleted}, deleted false when there were no notes.
//
// An edit whose result would pass max_chars is invalid, naming the size it would reach, and
// changes nothing; delete_section is never refused for size, so notes over a lowered limit can
// still shrink. Edits of the same notes are applied one after the other, never lost.
func notesRequest(p auth.Principal, in NotesInput, op string) (memory.Scope, memory.NotesEdit, error) {
	var f apierror.Fields
	sc, err := scope(p, in.ActingFor, in.Agent, memory.DefaultAgent, &f)
	if err != nil {
		return sc, memory.NotesEdit{}, err
	}
	edit := memory.NotesEdit{Op: op}
	switch op {
	case memory.NotesOverwrite, memory.NotesReplaceSection:
		if in.Content == nil {
			f.Add("content", "is required")
		} else {
			edit.Content = *in.Content
		}
	case memory.NotesAppend, memory.NotesPrepend:
		if in.Content == nil || *in.Content == "" {
			f.Add("content", "is required and must not be empty")
		} else {
			edit.Content = *in.Content
		}
	default:
		unusedForOp(&f, op, "content", in.Content != nil)
	}
	switch op {
	case memory.NotesReplaceSection, memory.NotesDeleteSection:
		edit.Section = notesSection(&f, in.Section)
	default:
		unusedForOp(&f, op, "section", in.Section != nil)
	}
	return sc, edit, f.Err()
}

// ReadNotes reads the notes.
func (a *App) ReadNotes(ctx context.Context, p auth.Principal, in NotesInput) (Notes, error) {
	sc, _, err := notesRequest(p, in, NotesOpRead)
	if err != nil {
		return Notes{}, err
	}
	n, err := a.store.ReadNotes(ctx, sc)
	if err != nil {
		return Notes{}, err
	}
	return Notes{Agent: sc.Agent, Content: n.Content, UpdatedAt: n.UpdatedAt,
		Chars: memory.CharCount(n.Content), MaxChars: a.cfg.NotesMaxChars}, nil
}

// ClearNotes removes the notes.
func (a *App) ClearNotes(ctx context.Context, p auth.Principal, in NotesInput) (NotesCleared, error) {
	sc, _, err := notesRequest(p, in, NotesOpClear)
	if err != nil {
		return NotesCleared{}, err
	}
	deleted, err := a.store.ClearNotes(ctx, sc)
	return NotesCleared{Agent: sc.Agent, Deleted: deleted}, err
}

// EditNotes applies the edit op (one of memory.NotesEdit's) to the notes.
func (a *App) EditNotes(ctx context.Context, p auth.Principal, op string, in NotesInput) (Notes, error) {
	sc, edit, err := notesRequest(p, in, op)
	if err != nil {
		return Notes{}, err
	}
	limit := a.cfg.NotesMaxChars
	out, err := a.store.EditNotes(ctx, store.EditNotesParams{Scope: sc, Edit: edit, MaxChars: limit})
	if err != nil {
		return Notes{}, err
	}
	res := Notes{Agent: sc.Agent, Content: out.Content, UpdatedAt: out.UpdatedAt,
		Chars: memory.CharCount(out.Content), MaxChars: limit, Created: out.Created}
	if op == memory.NotesReplaceSection {
		res.SectionCreated = &out.SectionCreated
	}
	return res, nil
}

// notesSection checks a section name: one line naming a heading, either the heading line
// ("## Preferences") or its text ("Preferences").
func notesSection(f *apierror.Fields, v *string) string {
	if v == nil {
		f.Add("section", "is required: a heading line such as \"## Preferences\" or its text")
		return ""
	}
	name := strings.TrimSpace(*v)
	_, text, isLine := memory.ParseHeading(name)
	switch {
	case name == "" || (isLine && text == ""):
		f.Add("section", "must name a heading: a heading line such as \"## Preferences\" or its text")
	case memory.CharCount(*v) > notesSectionMaxChars:
		f.Addf("section", "must be at most %d characters", notesSectionMaxChars)
	case strings.ContainsAny(name, "\r\n"):
		f.Add("section", "must be one line")
	default:
		return name
	}
	return ""
}
