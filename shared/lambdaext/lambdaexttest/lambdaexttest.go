// Package lambdaexttest serves Lambda's Extensions API (2020-01-01) as an extension sees it,
// for tests: register, a next call that returns when the test starts an invocation (as
// Lambda's returns when one begins), and exit/error.
package lambdaexttest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Identifier is the identifier register hands out.
const Identifier = "ext-1"

// API is the Extensions API. Register it on a mux of its own (New) or beside a Runtime API
// (Handle), as Lambda serves both on one address.
type API struct {
	t testing.TB
	// Registered receives the name of each extension registered, Asked the identifier sent with
	// each next call as it arrives (the extension is then done with the invocation before),
	// Exited the identifier and error type of each exit/error.
	Registered, Asked, Exited chan string
	// Refuse makes register answer 403, as Lambda does after an environment's Init phase.
	Refuse atomic.Bool
	// OnNext, when set before the extension starts, runs as each next call arrives.
	OnNext func()

	events chan event
}

type event struct {
	EventType  string `json:"eventType"`
	RequestID  string `json:"requestId"`
	DeadlineMs int64  `json:"deadlineMs"`
}

// New serves an Extensions API until the test ends; addr is AWS_LAMBDA_RUNTIME_API's value.
func New(t testing.TB) (api *API, addr string) {
	api = NewAPI(t)
	mux := http.NewServeMux()
	api.Handle(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return api, strings.TrimPrefix(srv.URL, "http://")
}

// NewAPI is an Extensions API to serve with Handle.
func NewAPI(t testing.TB) *API {
	return &API{t: t, Registered: make(chan string, 4), Asked: make(chan string, 16), Exited: make(chan string, 4),
		events: make(chan event, 16)}
}

// Handle registers the API's routes on mux.
func (api *API) Handle(mux *http.ServeMux) {
	mux.HandleFunc("POST /2020-01-01/extension/register", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Events []string `json:"events"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Events) != 1 || body.Events[0] != "INVOKE" {
			// an internal extension may take INVOKE events only
			api.t.Errorf("register: events %v, %v; want INVOKE alone", body.Events, err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if api.Refuse.Load() {
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"errorMessage":"Extension registration closed already","errorType":"Extension.RegistrationClosed"}`)) //nolint:errcheck
			return
		}
		api.Registered <- r.Header.Get("Lambda-Extension-Name")
		w.Header().Set("Lambda-Extension-Identifier", Identifier)
		w.Write([]byte(`{"functionName":"agentmem","functionVersion":"$LATEST","handler":"bootstrap"}`)) //nolint:errcheck
	})
	mux.HandleFunc("GET /2020-01-01/extension/event/next", func(w http.ResponseWriter, r *http.Request) {
		if api.OnNext != nil {
			api.OnNext()
		}
		api.Asked <- r.Header.Get("Lambda-Extension-Identifier")
		select {
		case ev := <-api.events:
			if ev.EventType == "" {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			json.NewEncoder(w).Encode(ev) //nolint:errcheck
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("POST /2020-01-01/extension/exit/error", func(w http.ResponseWriter, r *http.Request) {
		api.Exited <- r.Header.Get("Lambda-Extension-Identifier") + " " + r.Header.Get("Lambda-Extension-Function-Error-Type")
		w.WriteHeader(http.StatusAccepted)
	})
}

// Invoke starts invocation requestID for the extension: its next call returns the INVOKE event.
func (api *API) Invoke(requestID string, deadline time.Time) {
	api.events <- event{EventType: "INVOKE", RequestID: requestID, DeadlineMs: deadline.UnixMilli()}
}

// Fail makes the extension's next call answer 500.
func (api *API) Fail() { api.events <- event{} }

// NextAsked returns the identifier of the extension's next call, failing the test if none
// comes within a minute.
func (api *API) NextAsked() string {
	api.t.Helper()
	select {
	case id := <-api.Asked:
		return id
	case <-time.After(time.Minute):
		api.t.Fatal("the extension did not ask for its next event")
		return ""
	}
}

// NoNextYet fails the test if the extension has asked for its next event.
func (api *API) NoNextYet(when string) {
	api.t.Helper()
	select {
	case <-api.Asked:
		api.t.Fatalf("the extension asked for its next event %s", when)
	default:
	}
}
