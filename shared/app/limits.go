package app

// Limits of the contract.
const (
	// MaxRequestBytes is the largest request body; a document ingested by the operator command
	// is held to it too.
	MaxRequestBytes = 1 << 20

	maxMessages        = 100
	maxContentChars    = 100_000
	maxMetadataBytes   = 16 << 10
	maxMemories        = 100
	maxMemoryChars     = 20_000
	maxToolCalls       = 128
	maxNameChars       = 256
	maxToolCallIDChars = 255
	maxTTLSeconds      = 10 * 365 * 24 * 3600
	maxQueryChars      = 4096
)
