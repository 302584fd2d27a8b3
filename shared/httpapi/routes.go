package httpapi

import "net/http"

// Route is one function of the API: its name, which is also its path /v1/<name>, and its
// handler.
type Route struct {
	Name    string
	Handler http.Handler
}

// Routes is the route table of the local server: every function, by name. A Lambda binary
// takes its one handler from that function's constructor instead (next to its handler, in
// fn_<name>.go), so that it links only that one.
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
