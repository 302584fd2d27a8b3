package upstream

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// DefaultOpenAIBaseURL is OpenAI's API, the base of every OpenAI-compatible client (embeddings,
// chat) when none is configured.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// OpenAIEndpoint is where an OpenAI-compatible base URL receives the requests of one API, api
// ("/embeddings", "/chat/completions"):
//
//   - a base whose path ends in api is the endpoint itself (Azure OpenAI's
//     .../openai/deployments/<name>/<api>?api-version=...);
//   - a base whose path ends in /v1 gets api (https://api.openai.com/v1, http://localhost:8000/v1
//     for vLLM, http://localhost:1234/v1 for LM Studio, Azure's .../openai/v1);
//   - any other base gets /v1 and api (http://localhost:11434 for Ollama,
//     https://<ref>.supabase.co/functions/v1/<function>, which Supabase routes to the function
//     with the path appended).
//
// The query string is kept. what names the setting in the error ("embedding", "chat").
func OpenAIEndpoint(base, api, what string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%s base URL must be an http or https URL, not %q", what, base)
	}
	p := strings.TrimRight(u.Path, "/")
	switch {
	case strings.HasSuffix(p, api):
	case strings.HasSuffix(p, "/v1"):
		p += api
	default:
		p += "/v1" + api
	}
	u.Path, u.RawPath = p, ""
	return u.String(), nil
}

// OpenAIClient posts JSON requests to one OpenAI-compatible endpoint, with the key where its
// host wants it: the embeddings and chat clients differ in their bodies only.
type OpenAIClient struct {
	// Endpoint is the URL every request goes to (see OpenAIEndpoint).
	Endpoint string
	// Host is the endpoint's host name, without the port.
	Host string
	// Azure is set for an Azure OpenAI host (see AzureOpenAIHost), which takes the key as an
	// api-key header.
	Azure  bool
	apiKey string
	client *http.Client
}

// NewOpenAIClient is the client of base's endpoint for api (see OpenAIEndpoint), sending apiKey
// when not empty, through client (default a plain http.Client; the Retrier bounds each attempt).
func NewOpenAIClient(base, api, what, apiKey string, client *http.Client) (*OpenAIClient, error) {
	endpoint, err := OpenAIEndpoint(base, api, what)
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(endpoint)
	if client == nil {
		client = &http.Client{}
	}
	return &OpenAIClient{Endpoint: endpoint, Host: u.Hostname(), Azure: AzureOpenAIHost(u.Hostname()),
		apiKey: apiKey, client: client}, nil
}

// Post sends body, a JSON request, and answers the response, whose body the caller closes. A
// request that could not be sent is Temporary (see SendError).
func (c *OpenAIClient) Post(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "agentmem")
	if c.apiKey != "" {
		if c.Azure {
			req.Header.Set("api-key", c.apiKey)
		} else {
			req.Header.Set("Authorization", "Bearer "+c.apiKey)
		}
	}
	res, err := c.client.Do(req)
	if err != nil {
		return nil, Temporary(SendError(err), 0)
	}
	return res, nil
}
