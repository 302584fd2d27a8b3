package httpapi

import "net/http"

// Route is one function of the API: its name, which is also its path /v1/<name>, and its
// handler.
type Route struct {
	Name    string
	Handler http.Handler
}

// Routes is the route table of the local server: every function, by name. A Lambda binary
// takes its one handler from the constructor below instead, so that it links only that one.
func (s *Server) Routes() []Route {
	return []Route{
		{"active-session", s.ActiveSession()},
		{"commit-turn", s.CommitTurn()},
		{"forget-user", s.ForgetUser()},
		{"get-context", s.GetContext()},
		{"intents", s.Intents()},
		{"jobs", s.Jobs()},
		{"knowledge", s.Knowledge()},
		{"mcp", s.MCP()},
		{"memories", s.Memories()},
		{"notes", s.Notes()},
		{"process-jobs", s.ProcessJobs()},
		{"recall", s.Recall()},
		{"sessions", s.Sessions()},
		{"sweep-expired", s.SweepExpired()},
		{"user-memory", s.UserMemory()},
		{"user-state", s.UserState()},
	}
}

// FunctionNames lists every function's name, in the order of Routes: the set is fixed at build
// time.
func FunctionNames() []string { return (&Server{}).Functions() }

// ActiveSession is the handler of active-session.
func (s *Server) ActiveSession() http.Handler {
	return s.handler(function{name: "active-session", run: (*Server).activeSession})
}

// CommitTurn is the handler of commit-turn.
func (s *Server) CommitTurn() http.Handler {
	return s.handler(function{name: "commit-turn", run: (*Server).commitTurn})
}

// ForgetUser is the handler of forget-user.
func (s *Server) ForgetUser() http.Handler {
	return s.handler(function{name: "forget-user", run: (*Server).forgetUser})
}

// GetContext is the handler of get-context.
func (s *Server) GetContext() http.Handler {
	return s.handler(function{name: "get-context", run: (*Server).getContext})
}

// Intents is the handler of intents.
func (s *Server) Intents() http.Handler {
	return s.handler(function{name: "intents", run: (*Server).intents})
}

// Jobs is the handler of jobs, for service callers only.
func (s *Server) Jobs() http.Handler {
	return s.handler(function{name: "jobs", serviceOnly: true, run: (*Server).jobs})
}

// Knowledge is the handler of knowledge.
func (s *Server) Knowledge() http.Handler {
	return s.handler(function{name: "knowledge", run: (*Server).knowledge})
}

// Memories is the handler of memories.
func (s *Server) Memories() http.Handler {
	return s.handler(function{name: "memories", run: (*Server).memories})
}

// Notes is the handler of notes.
func (s *Server) Notes() http.Handler {
	return s.handler(function{name: "notes", run: (*Server).notes})
}

// ProcessJobs is the handler of process-jobs, for service callers only. Its scheduled entry
// is ScheduledProcessJobs.
func (s *Server) ProcessJobs() http.Handler {
	return s.handler(function{name: "process-jobs", serviceOnly: true, run: (*Server).processJobs})
}

// Recall is the handler of recall.
func (s *Server) Recall() http.Handler {
	return s.handler(function{name: "recall", run: (*Server).recall})
}

// Sessions is the handler of sessions.
func (s *Server) Sessions() http.Handler {
	return s.handler(function{name: "sessions", run: (*Server).sessions})
}

// SweepExpired is the handler of sweep-expired, for service callers only. Its scheduled entry
// is ScheduledSweep.
func (s *Server) SweepExpired() http.Handler {
	return s.handler(function{name: "sweep-expired", serviceOnly: true, run: (*Server).sweepExpired})
}

// UserMemory is the handler of user-memory.
func (s *Server) UserMemory() http.Handler {
	return s.handler(function{name: "user-memory", run: (*Server).userMemory})
}

// UserState is the handler of user-state.
func (s *Server) UserState() http.Handler {
	return s.handler(function{name: "user-state", run: (*Server).userState})
}
