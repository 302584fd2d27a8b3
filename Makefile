# agentmem: `make dev` runs the service locally, `make test` runs every test.
# `make help` lists the rest.

SHELL := /usr/bin/env bash
.DEFAULT_GOAL := help

FUNCTIONS := $(notdir $(patsubst %/,%,$(wildcard functions/*/)))

# STATICCHECK is the pinned staticcheck make lint runs (built from the module proxy on first use).
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "; printf "Usage: make <target>\n\n"} \
		/^[a-zA-Z_-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
	@printf '\nmake dev and make test set up everything they need (PostgreSQL 17 + pgvector,\nPgBouncer, the Supabase CLI) on first use; see README.md.\n'

.PHONY: dev
dev: ## Run every function locally on http://127.0.0.1:9000/v1/<name> (ADDR=host:port moves it), the demo chat at /demo
	@scripts/dev.sh

.PHONY: test
test: ## Run all tests: local stack, migrations, advisors, go vet, go test, client and browser tests, Python client (ARGS=-run ...)
	@scripts/test.sh $(ARGS)

.PHONY: test-short
test-short: ## Run the shared packages' fast tests (go test -short: no large seeds, races or long waits; ARGS=-run ...)
	@scripts/localdb.sh && scripts/redis.sh && \
		AGENTMEM_TEST_DATABASE_URL=$${AGENTMEM_TEST_DATABASE_URL:-$${DATABASE_URL:-postgresql://postgres:postgres@127.0.0.1:$${AGENTMEM_DB_PORT:-54322}/postgres}} \
		AGENTMEM_TEST_REDIS_URL=$${AGENTMEM_TEST_REDIS_URL:-redis://127.0.0.1:$${AGENTMEM_REDIS_PORT:-6380}} \
		go test -count=1 -short $(ARGS) ./shared/...

.PHONY: test-partitioned
test-partitioned: ## Run the store's, use cases' and HTTP API's tests on tables partitioned by user (AGENTMEM_TEST_USER_PARTITIONS, default 4)
	@scripts/test-partitioned.sh $(ARGS)

.PHONY: test-js
test-js: ## Run the TypeScript client's tests and the demo page's browser test (Chromium)
	@scripts/localdb.sh && scripts/test-js.sh

.PHONY: test-python
test-python: ## Run the Python client's tests (python3 -m unittest, pyright) against a server of their own
	@scripts/localdb.sh && scripts/test-python.sh

.PHONY: demo-png
demo-png: ## Run test-js and keep its screenshot of the demo page as docs/demo.png
	@scripts/localdb.sh && AGENTMEM_DEMO_SCREENSHOT=$(CURDIR)/docs/demo.png scripts/test-js.sh
.PHONY: fault
fault: ## Fault test: restart a private PostgreSQL and kill its PgBouncer under load (ports 54399, 6599)
	@scripts/fault.sh
.PHONY: test-replica
test-replica: ## Read replica test: a private primary and streaming replica (ports 54350, 54351), paused and killed under load
	@scripts/replica.sh
.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME each (default 60s; CI: FUZZTIME=200x, 200 inputs)
	@scripts/localdb.sh && FUZZTIME=$(or $(FUZZTIME),60s) scripts/fuzz.sh

.PHONY: build
build: ## Build every function for Lambda (linux/arm64) into build/<name>/bootstrap
	@if [ -z "$(FUNCTIONS)" ]; then echo "build: no functions/*/ yet"; exit 0; fi; \
	for fn in $(FUNCTIONS); do \
		scripts/build-function.sh "$$fn" "build/$$fn" || exit 1; \
		printf '  %-20s %6s KiB\n' "$$fn" "$$(( $$(stat -c %s build/$$fn/bootstrap) / 1024 ))"; \
	done

# sam build runs `make build-<LogicalId>` for every function of template.yaml (BuildMethod:
# makefile), with ARTIFACTS_DIR set: build-RecallFunction builds functions/recall.
build-%Function:
	@scripts/build-function.sh "$*" "$(ARTIFACTS_DIR)"

.PHONY: image
image: ## Build the container image without Docker into build/ (ARCH=arm64|amd64, PUSH=<ref> to push)
	@go run ./cmd/agentmem-image --arch $(or $(ARCH),arm64) --out build $(if $(PUSH),--push $(PUSH))

.PHONY: token
token: ## Print a local token (SUB=<uuid> ROLE=authenticated|service_role TENANT=<t> TTL=1h ARGS=...)
	@go run ./cmd/agentmem token $(if $(SUB),--sub $(SUB)) $(if $(ROLE),--role $(ROLE)) \
		$(if $(TENANT),--tenant $(TENANT)) $(if $(TTL),--ttl $(TTL)) $(ARGS)

.PHONY: migrate
migrate: ## Apply supabase/migrations to DATABASE_URL (default: the local database)
	@scripts/migrate.sh

.PHONY: schema
schema: ## Write supabase/schema.sql: the schema the migrations make in a scratch database
	@scripts/localdb.sh
	@AGENTMEM_TEST_DATABASE_URL=$${AGENTMEM_TEST_DATABASE_URL:-$${DATABASE_URL:-postgresql://postgres:postgres@127.0.0.1:$${AGENTMEM_DB_PORT:-54322}/postgres}} \
		go test -count=1 -run '^TestSchemaFileIsCurrent$$' ./shared/schema -args -update

.PHONY: lint
lint: ## gofmt, go mod tidy, go vet, staticcheck, one handler per binary, Supabase advisors on the local database
	@unformatted=$$(gofmt -l $$(find . -name '*.go' -not -path './node_modules/*' -not -path './build/*')); \
	if [ -n "$$unformatted" ]; then echo "gofmt: not formatted:"; echo "$$unformatted"; exit 1; fi
	@go mod tidy -diff || { echo "go.mod or go.sum is not tidy: run go mod tidy"; exit 1; }
	@go vet ./...
	@scripts/check-binaries.sh
	@go run $(STATICCHECK) ./...
	@scripts/localdb.sh && scripts/migrate.sh && scripts/advisors.sh

.PHONY: db
db: ## Make sure PostgreSQL 17 + pgvector listens on 127.0.0.1:54322
	@scripts/localdb.sh

.PHONY: db-stop
db-stop: ## Stop the local PostgreSQL and PgBouncer (data is kept)
	@scripts/localdb.sh stop

.PHONY: redis
redis: ## Make sure Redis listens on 127.0.0.1:6380 (the Redis adapter's tests; redis-server installed when missing)
	@scripts/redis.sh

.PHONY: pooler
pooler: ## Make sure PgBouncer (transaction mode) listens on 127.0.0.1:6543
	@scripts/localdb.sh && scripts/pgbouncer.sh

.PHONY: bench
bench: ## Run the benchmark workloads into bench-results/<time>/ (QUICK=1: small; RUNS=3: medians; PEERS=dir: side by side; ARGS=...)
	@scripts/localdb.sh && scripts/pgbouncer.sh && scripts/redis.sh && scripts/migrate.sh
	@PATH="$$PATH:/usr/local/go/bin" go run ./cmd/agentmem-bench $(if $(QUICK),-quick) $(if $(RUNS),-runs $(RUNS)) $(if $(PEERS),-peers $(PEERS)) $(ARGS)

.PHONY: clean
clean: ## Remove build outputs (build/, bin/); the database and node_modules stay
	rm -rf build bin
