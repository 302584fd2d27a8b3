package app_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/memory"
)

// sharedIn is the shared memory of hits and whether one is there.
func sharedIn(hits []memory.Hit) (memory.Hit, bool) {
	for _, h := range hits {
		if h.Shared {
			return h, true
		}
	}
	return memory.Hit{}, false
}

// With the Redis cache, a change of the tenant's shared memories is in the next get-context
// that recalls memories (one with a query, which is never cached), before its job is delivered;
// a cached window, which holds no memories, stays served, and the shared memories' jobs
// (of no user) are delivered like any other.
func TestSharedMemoryChangesReachGetContextThroughTheCache(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: waits out the cache's settle time after its deliveries")
	}
	r := newCacheRig(t)
	ctx := context.Background()
	u := user()
	session := uuid.NewString()
	window := app.GetContextInput{SessionID: &session}
	r.commit(u, session, "one")
	r.deliver()
	if c := r.get(u, window); len(c.Memories) != 0 {
		t.Fatalf("a window without a query holds memories: %v", c.Memories)
	}
	if !r.servedFromCache(u, window, session) {
		t.Fatal("the window is not served from the cache")
	}

	query := "office closed Fridays"
	asked := app.GetContextInput{SessionID: &session, Query: &query}
	if _, found := sharedIn(r.get(u, asked).Memories); found {
		t.Fatal("a shared memory before any was written")
	}
	yes := true
	created, err := r.cached.CreateMemory(ctx, r.service, app.CreateMemoryInput{Shared: &yes, Content: ptr("The office is closed on Fridays.")})
	if err != nil {
		t.Fatal(err)
	}
	if h, found := sharedIn(r.get(u, asked).Memories); !found || h.ID != created.ID.String() {
		t.Errorf("get-context after the shared memory was created: %v, want %s marked shared", h, created.ID)
	}
	changed := "The office is closed on Fridays and Saturdays."
	if _, err := r.cached.UpdateMemory(ctx, r.service, app.UpdateMemoryInput{Shared: &yes, ID: ptr(created.ID.String()), Content: &changed}); err != nil {
		t.Fatal(err)
	}
	if h, _ := sharedIn(r.get(u, asked).Memories); h.Content != changed {
		t.Errorf("get-context after the shared memory changed: %q, want %q", h.Content, changed)
	}
	no := false
	asked.IncludeShared = &no
	if h, found := sharedIn(r.get(u, asked).Memories); found {
		t.Errorf("get-context with include_shared false: %v", h)
	}
	if !r.servedFromCache(u, window, session) {
		t.Error("the user's window is no longer served from the cache after a change of shared memories")
	}
	r.deliver()
	var undelivered int
	if err := r.db.QueryRow(ctx, `select count(*) from agentmem.jobs where user_id = '' and status <> 'done'`).Scan(&undelivered); err != nil || undelivered != 0 {
		t.Errorf("%d jobs of the shared memory not done, %v", undelivered, err)
	}
	if _, err := r.cached.DeleteMemory(ctx, r.service, app.OneMemoryInput{Shared: &yes, ID: ptr(created.ID.String())}); err != nil {
		t.Fatal(err)
	}
	asked.IncludeShared = nil
	if h, found := sharedIn(r.get(u, asked).Memories); found {
		t.Errorf("get-context after the shared memory was deleted: %v", h)
	}
}
