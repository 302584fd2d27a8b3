package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// notesSectionMaxChars bounds a section name: one heading line.
const notesSectionMaxChars = 512

// The operations of notes: the edits of memory.NotesEdit, plus read and clear.
const (
	notesOpRead  = "read"
	notesOpClear = "clear"
)

type notesRequest struct {
	actingFor
	Op      string  `json:"op"`
	Agent   *string `json:"agent"`
	Content *string `json:"content"`
	Section *string `json:"section"`
}

// notesResponse is the notes after read or an edit. chars counts characters (code points),
// the unit of max_chars.
type notesResponse struct {
	Agent     string     `json:"agent"`
	Content   string     `json:"content"`
	UpdatedAt *time.Time `json:"updated_at"`
	Chars     int        `json:"chars"`
	MaxChars  int        `json:"max_chars"`
	// SectionCreated is set by replace_section only.
	SectionCreated *bool `json:"section_created,omitempty"`
}

type notesCleared struct {
	Agent   string `json:"agent"`
	Deleted bool   `json:"deleted"`
}

// notes are an agent's long-term Markdown notes about the user, one text per (user, agent);
// agent defaults to "default". The section rules are memory.NotesEdit's.
//
//   - read: 200 {agent, content, updated_at, chars, max_chars}. Notes never written read as
//     content "" and updated_at null, not 404, so that an agent can always read before writing.
//   - overwrite {content}, append {content}, prepend {content}, replace_section {section,
//     content}, delete_section {section}: the same body as read, after the edit; 201 when the
//     agent had no notes for the user before, else 200. replace_section adds section_created,
//     true when the section did not exist and was appended at the end. append and prepend
//     need non-empty content; overwrite with "" empties the notes (clear removes them).
//   - delete_section of a section that does not exist: 404, nothing changed.
//   - clear: 200 {agent, deleted}, deleted false when there were no notes.
//
// An edit whose result would pass max_chars answers 400 naming the size it would reach and
// changes nothing; delete_section is never refused for size, so notes over a lowered limit can
// still shrink. Edits of the same notes are applied one after the other, never lost.
func (s *Server) notes(ctx context.Context, c *call) (int, any, error) {
	op, err := opOf(c.body, notesOpRead, memory.NotesOverwrite, memory.NotesAppend, memory.NotesPrepend,
		memory.NotesReplaceSection, memory.NotesDeleteSection, notesOpClear)
	if err != nil {
		return 0, nil, err
	}
	var req notesRequest
	if err := decode(c.body, &req); err != nil {
		return 0, nil, err
	}
	var f apierror.Fields
	sc, err := c.scope(req.actingFor, req.Agent, memory.DefaultAgent, &f)
	if err != nil {
		return 0, nil, err
	}
	edit := memory.NotesEdit{Op: op}
	switch op {
	case memory.NotesOverwrite, memory.NotesReplaceSection:
		if req.Content == nil {
			f.Add("content", "is required")
		} else {
			edit.Content = *req.Content
		}
	case memory.NotesAppend, memory.NotesPrepend:
		if req.Content == nil || *req.Content == "" {
			f.Add("content", "is required and must not be empty")
		} else {
			edit.Content = *req.Content
		}
	default:
		unusedForOp(&f, op, "content", req.Content != nil)
	}
	switch op {
	case memory.NotesReplaceSection, memory.NotesDeleteSection:
		edit.Section = notesSection(&f, req.Section)
	default:
		unusedForOp(&f, op, "section", req.Section != nil)
	}
	if err := f.Err(); err != nil {
		return 0, nil, err
	}

	limit := s.cfg.NotesMaxChars
	if limit < 1 {
		limit = memory.DefaultNotesMaxChars
	}
	switch op {
	case notesOpRead:
		n, err := s.store.ReadNotes(ctx, sc)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, notesResponse{Agent: sc.Agent, Content: n.Content, UpdatedAt: n.UpdatedAt,
			Chars: memory.CharCount(n.Content), MaxChars: limit}, nil
	case notesOpClear:
		deleted, err := s.store.ClearNotes(ctx, sc)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, notesCleared{Agent: sc.Agent, Deleted: deleted}, nil
	}
	out, err := s.store.EditNotes(ctx, store.EditNotesParams{Scope: sc, Edit: edit, MaxChars: limit})
	if err != nil {
		return 0, nil, err
	}
	res := notesResponse{Agent: sc.Agent, Content: out.Content, UpdatedAt: out.UpdatedAt,
		Chars: memory.CharCount(out.Content), MaxChars: limit}
	if op == memory.NotesReplaceSection {
		res.SectionCreated = &out.SectionCreated
	}
	if out.Created {
		return http.StatusCreated, res, nil
	}
	return http.StatusOK, res, nil
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
