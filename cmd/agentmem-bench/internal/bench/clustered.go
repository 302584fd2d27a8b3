package bench

// StreamSourcesClustered is the stream (11, seed 53) of the clustered variant of W3-sources'
// data, drawn in the order GenerateClusteredSources gives.
const StreamSourcesClustered = 11

// Vector kinds of W3-sources: random texts (every word drawn from the whole vocabulary, so any
// two texts' vectors are nearly orthogonal: the worst case for a graph index) and clustered texts
// (topics, near-duplicates and paraphrases, as a real embedding model's vectors are).
const (
	VectorsRandom    = "random"
	VectorsClustered = "clustered"
)

// The shape of clustered texts. A text draws ClusterCommonShare of its words from a small
// set of words every text uses (real models' vectors share a common direction, so that
// unrelated texts have a positive cosine), ClusterTopicShare from its topic's words, and the
// rest from the whole vocabulary; topics are drawn with a skew (a few common, many rare, as a
// long-lived assistant's conversations are), and ClusterRepeatShare of the texts restate an
// earlier text of the same kind with ClusterRepeatChanged of its words changed to other words
// of its topic (near-duplicates and paraphrases).
const (
	ClusterTopics        = 400
	ClusterTopicWords    = 24
	ClusterCommonWords   = 8
	ClusterCommonShare   = 0.2
	ClusterTopicShare    = 0.55
	ClusterRepeatShare   = 0.15
	ClusterRepeatChanged = 3
)

// clusterWords are the words of the clustered texts: the common ones, and each topic's.
type clusterWords struct {
	common []uint16
	topics [][]uint16
}

// drawClusterWords draws the common words, then each topic's words (a topic's words are
// distinct; topics may share words, as real topics do).
func drawClusterWords(r *Rand) clusterWords {
	w := clusterWords{common: make([]uint16, ClusterCommonWords), topics: make([][]uint16, ClusterTopics)}
	for i := range w.common {
		w.common[i] = uint16(r.Int(VocabSize))
	}
	for t := range w.topics {
		seen := map[uint16]bool{}
		for len(w.topics[t]) < ClusterTopicWords {
			v := uint16(r.Int(VocabSize))
			if !seen[v] {
				seen[v] = true
				w.topics[t] = append(w.topics[t], v)
			}
		}
	}
	return w
}

// topic draws a topic with a quadratic skew: topic 0 is drawn far more often than the last.
func (w clusterWords) topic(r *Rand) int {
	u := r.Float()
	return int(u * u * float64(ClusterTopics))
}

// fill writes texts of n words each into words (len(words)/n texts), drawing from r.
func (w clusterWords) fill(r *Rand, words []uint16, n int) {
	common := int(ClusterCommonShare*float64(n) + 0.5)
	topical := int(ClusterTopicShare*float64(n) + 0.5)
	topicOf := make([]int, len(words)/n)
	// Texts are distinct (memories are unique per text): a repeat that came out the same as a
	// text before it changes one more word.
	seen := make(map[string]bool, len(topicOf))
	key := func(text []uint16) string {
		b := make([]byte, 2*len(text))
		for i, v := range text {
			b[2*i], b[2*i+1] = byte(v), byte(v>>8)
		}
		return string(b)
	}
	for i := range topicOf {
		text := words[i*n : (i+1)*n]
		if i > 0 && r.Float() < ClusterRepeatShare {
			prev := r.Int(i)
			t := topicOf[prev]
			topicOf[i] = t
			copy(text, words[prev*n:(prev+1)*n])
			for range ClusterRepeatChanged {
				text[r.Int(n)] = w.topics[t][r.Int(ClusterTopicWords)]
			}
			for seen[key(text)] {
				text[r.Int(n)] = uint16(r.Int(VocabSize))
			}
			seen[key(text)] = true
			continue
		}
		t := w.topic(r)
		topicOf[i] = t
		for j := range text {
			switch {
			case j < common:
				text[j] = w.common[r.Int(ClusterCommonWords)]
			case j < common+topical:
				text[j] = w.topics[t][r.Int(ClusterTopicWords)]
			default:
				text[j] = uint16(r.Int(VocabSize))
			}
		}
		for seen[key(text)] {
			text[r.Int(n)] = uint16(r.Int(VocabSize))
		}
		seen[key(text)] = true
	}
}

// GenerateClusteredSources draws W3-sources data of clustered texts from r (the clustered
// stream): the cluster words, then the user's messages, memories and the other users' messages
// in the shape SourcesCorpus describes. Other users' texts come from the same topics, as other
// people talk about the same things.
func GenerateClusteredSources(r *Rand, rows, others int) *SourcesCorpus {
	c := &SourcesCorpus{Rows: rows, Others: others, Vectors: VectorsClustered,
		messages: make([]uint16, rows*MessageWords), memories: make([]uint16, rows*MemoryWords),
		others: make([]uint16, rows*MessageWords)}
	w := drawClusterWords(r)
	w.fill(r, c.messages, MessageWords)
	w.fill(r, c.memories, MemoryWords)
	w.fill(r, c.others, MessageWords)
	return c
}
