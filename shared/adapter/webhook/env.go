package webhook

import (
	"time"

	"github.com/agentmem/agentmem/shared/envvar"
)

// ConfigFromEnv reads the webhook adapter's settings: WEBHOOK_URL, WEBHOOK_SECRET,
// WEBHOOK_TIMEOUT, QSTASH_TOKEN, QSTASH_URL and QSTASH_RETRIES. It checks each value's form;
// New checks that they make an adapter.
func ConfigFromEnv(getenv envvar.Getenv) (Config, error) {
	c := Config{
		URL:         envvar.String(getenv, "WEBHOOK_URL"),
		Secret:      envvar.String(getenv, "WEBHOOK_SECRET"),
		QStashToken: envvar.String(getenv, "QSTASH_TOKEN"),
		QStashURL:   envvar.URL(getenv, "QSTASH_URL", DefaultQStashURL),
	}
	var err error
	if c.Timeout, err = envvar.Duration(getenv, "WEBHOOK_TIMEOUT", DefaultTimeout, time.Millisecond); err != nil {
		return c, err
	}
	if envvar.String(getenv, "QSTASH_RETRIES") != "" {
		n, err := envvar.Int(func(name string) string { return envvar.String(getenv, name) }, "QSTASH_RETRIES", 0, 0, 100)
		if err != nil {
			return c, err
		}
		c.QStashRetries = &n
	}
	return c, nil
}
