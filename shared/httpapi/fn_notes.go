package httpapi

import (
	"context"
	"net/http"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
)

// Notes is the handler of notes.
func (s *Server) Notes() http.Handler {
	return s.handler(function{name: "notes", run: (*Server).notes})
}

// notes serves the operations of notes (see app.NotesInput): an edit answers 201 when the
// agent had no notes for the user before, else 200.
func (s *Server) notes(ctx context.Context, c *call) (int, any, error) {
	op, err := opOf(c.body, app.NotesOpRead, memory.NotesOverwrite, memory.NotesAppend, memory.NotesPrepend,
		memory.NotesReplaceSection, memory.NotesDeleteSection, app.NotesOpClear)
	if err != nil {
		return 0, nil, err
	}
	switch op {
	case app.NotesOpRead:
		return run(ctx, c, s.app.ReadNotes, ok200)
	case app.NotesOpClear:
		return run(ctx, c, s.app.ClearNotes, ok200)
	default:
		edit := func(ctx context.Context, p auth.Principal, in app.NotesInput) (app.Notes, error) {
			return s.app.EditNotes(ctx, p, op, in)
		}
		return run(ctx, c, edit, func(o app.Notes) int { return createdOr200(o.Created) })
	}
}
