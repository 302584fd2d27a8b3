package mem0

import (
	"time"

	"github.com/agentmem/agentmem/shared/envvar"
)

// DefaultRecall is MEM0_RECALL's default: Mem0's memories are not merged into recall.
const DefaultRecall = false

// ConfigFromEnv reads the Mem0 adapter's settings: MEM0_API_KEY, MEM0_URL, MEM0_ORG_ID,
// MEM0_PROJECT_ID, MEM0_TIMEOUT, MEM0_RECALL and MEM0_RECALL_TIMEOUT. It checks each value's
// form; New checks that they make an adapter.
func ConfigFromEnv(getenv envvar.Getenv) (Config, error) {
	c := Config{
		APIKey:    envvar.String(getenv, "MEM0_API_KEY"),
		URL:       envvar.URL(getenv, "MEM0_URL", DefaultURL),
		OrgID:     envvar.String(getenv, "MEM0_ORG_ID"),
		ProjectID: envvar.String(getenv, "MEM0_PROJECT_ID"),
	}
	var err error
	if c.Timeout, err = envvar.Duration(getenv, "MEM0_TIMEOUT", DefaultTimeout, time.Millisecond); err != nil {
		return c, err
	}
	if c.RecallTimeout, err = envvar.Duration(getenv, "MEM0_RECALL_TIMEOUT", DefaultRecallTimeout, time.Millisecond); err != nil {
		return c, err
	}
	if c.Recall, err = envvar.Bool(getenv, "MEM0_RECALL", DefaultRecall); err != nil {
		return c, err
	}
	return c, nil
}
