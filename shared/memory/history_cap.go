package memory

// MaxContextMessages is the most messages a get-context window reads (its max_messages): the
// history cap never moves a message that a window of this size could still hold.
const MaxContextMessages = 500

// The bounds of a history cap (HISTORY_KEEP_MESSAGES, commit-turn's keep_messages): 0 keeps
// every message live; otherwise at least a whole get-context window stays live.
const (
	MinHistoryKeep = MaxContextMessages
	MaxHistoryKeep = 1_000_000
)

// The fates of a message past a session's history cap (HISTORY_OVERFLOW).
const (
	HistoryArchive = "archive"
	HistoryDelete  = "delete"
)

// HistoryCap is how many messages of a session stay live, and what becomes of older ones: the
// sweep's "cap histories" step (migration archive_old_history).
type HistoryCap struct {
	// Keep is the deployment's cap (HISTORY_KEEP_MESSAGES): 0 (the default) caps no session
	// but those with a keep_messages of their own; otherwise MinHistoryKeep to
	// MaxHistoryKeep.
	Keep int
	// Delete deletes the messages past the cap (HISTORY_OVERFLOW=delete) instead of moving
	// them to agentmem.messages_archive.
	Delete bool
}

// CapCounts counts what a sweep's history cap did: the sessions it looked at, and the
// messages it moved to the archive or deleted.
type CapCounts struct {
	Sessions int64 `json:"sessions"`
	Archived int64 `json:"archived"`
	Deleted  int64 `json:"deleted"`
}
