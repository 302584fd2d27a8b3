// Package bench holds the pieces of agentmem's benchmark (cmd/agentmem-bench) that are worth
// testing on their own (internal to the command, so that nothing else depends on them or on
// their plotting): the deterministic workload data of shared/WORKLOADS.md (the mulberry32
// generator, the vocabulary, texts, chat sessions, memories, queries and the workload embedder),
// latency statistics, and the report (results.json, results.md and PNG charts).
//
// The data is fully determined by the specification, so other systems can be measured on the
// same texts and vectors and compared side by side.
package bench

import "math"

// Rand is mulberry32, a 32-bit PRNG whose state is a single uint32. It is not safe for
// concurrent use.
type Rand struct{ a uint32 }

// NewRand returns a generator seeded with seed.
func NewRand(seed uint32) *Rand { return &Rand{a: seed} }

// Uint32 draws the next value: a += 0x6D2B79F5; t = imul(a ^ (a >>> 15), 1 | a);
// t = (t + imul(t ^ (t >>> 7), 61 | t)) ^ t; return t ^ (t >>> 14), all on uint32.
func (r *Rand) Uint32() uint32 {
	r.a += 0x6D2B79F5
	a := r.a
	t := (a ^ (a >> 15)) * (1 | a)
	t = (t + (t^(t>>7))*(61|t)) ^ t
	return t ^ (t >> 14)
}

// Float draws a value in [0, 1): Uint32() / 2^32.
func (r *Rand) Float() float64 { return float64(r.Uint32()) / 4294967296 }

// Int draws a value in [0, n): floor(Float() * n).
func (r *Rand) Int(n int) int { return int(math.Floor(r.Float() * float64(n))) }

// The streams of the specification: stream k is mulberry32 seeded with 42 + k. StreamHistory
// and StreamConversations are the project's own, for the history workload and the
// conversation set of the quality workload, which the specification does not have.
const (
	StreamMessages = 0
	StreamMemories = 1
	StreamOps      = 2
	StreamWarmup   = 3
	StreamGrowth   = 4
	StreamQueries  = 5
	StreamHistory  = 6

	StreamConversations = 7
)

// Stream returns a fresh generator of stream k.
func Stream(k int) *Rand { return NewRand(uint32(42 + k)) }
