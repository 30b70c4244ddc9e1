# ActivityLedger — `make run` starts the service, `make test` builds and runs every test.
SWIFT ?= swift
DB ?= ./ledger.sqlite
HOST ?= 127.0.0.1
PORT ?= 8080
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps build release-cli release run test unit-tests fuzz-api fuzz-ci web-deps web-tests web-bench bench demo clean

# Installs the system libraries the build links against, and the tools the APNs proxy tests use (openssl makes
# their certificate, curl is their HTTP/2 push client; ca-certificates lets the proxy trust Apple's hosts), only
# when missing.
deps:
	@missing=""; \
	for p in libzstd-dev libsqlite3-dev pkg-config openssl curl ca-certificates; do \
		dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build

release-cli: deps
	$(SWIFT) build -c release --product activity-ledger

release: release-cli
	$(SWIFT) build -c release --product ledger-bench

# The service on an embedded SQLite ledger file (override with DB=, HOST=, PORT=).
run: release-cli
	.build/release/activity-ledger serve --db $(DB) --host $(HOST) --port $(PORT)

# A ledger filled with a generated corpus, to try the CLI on: make demo && .build/release/activity-ledger stats --db demo.sqlite
demo: release
	rm -f demo.sqlite demo.sqlite-wal demo.sqlite-shm
	.build/release/ledger-bench corpus --activities 2000 --events-per-activity 25 --out /tmp/activity-ledger-demo.jsonl
	.build/release/activity-ledger import /tmp/activity-ledger-demo.jsonl --db demo.sqlite
	.build/release/activity-ledger stats --db demo.sqlite

test: unit-tests fuzz-ci web-tests

# The HTTP suites run on their own: their long-poll timings need Swift's cooperative pool (two threads on a
# 2-core machine), which the storage suites' blocking SQLite work would otherwise hold for tens of seconds.
# The storage suites run beside a throwaway PostgreSQL cluster (Tools/pg-cluster.sh: installs postgresql-15 when
# missing, initdb in a temporary folder as the postgres user, a free loopback port, stopped afterwards, also on
# failure), whose URL the PostgreSQL half of the suites (and the several-servers test) reads from
# LEDGER_TEST_POSTGRES.
unit-tests: deps
	$(SWIFT) build --build-tests
	bash Tools/pg-cluster.sh run $(SWIFT) test --skip-build --skip LedgerServerTests
	bash Tools/pg-cluster.sh run $(SWIFT) test --skip-build --filter LedgerServerTests

# schemathesis against a live server from Schemas/openapi.yaml, bounded in time, on a new random seed.
fuzz-api: deps
	$(SWIFT) build --product activity-ledger
	bash Tools/fuzz-api.sh

# The same on a fixed seed with every check, so `make test` (and CI) is reproducible (~40 s on 2 cores);
# `make fuzz-api` explores new seeds.
FUZZ_CI_SEED ?= 160719921940981391969996257099128701156
FUZZ_CI_EXAMPLES ?= 60
fuzz-ci: deps
	$(SWIFT) build --product activity-ledger
	FUZZ_SEED=$(FUZZ_CI_SEED) FUZZ_MAX_EXAMPLES=$(FUZZ_CI_EXAMPLES) bash Tools/fuzz-api.sh

# The incident view in headless Chromium against the real binary (Tools/web-test.py); screenshots in
# .build/web-artifacts. Installs Chromium, its driver and selenium when missing.
web-deps:
	@missing=""; \
	for p in chromium chromium-driver; do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@python3 -c "import selenium" 2>/dev/null || python3 -m pip install -q selenium

web-tests: deps web-deps
	$(SWIFT) build --product activity-ledger
	python3 Tools/web-test.py --binary .build/debug/activity-ledger --artifacts .build/web-artifacts

# The incident view's first render of a 10k-event activity and of a 100k-subscriber update (SPEC: < 2 s each).
web-bench: release web-deps
	python3 Tools/web-test.py --scale --binary .build/release/activity-ledger --artifacts .build/web-artifacts-bench

# Every SPEC §8 figure beside its baseline (ledger-bench all; BENCHMARKS.md has the results and commands).
bench: release web-deps
	stdbuf -oL .build/release/ledger-bench all
	python3 Tools/web-test.py --scale --binary .build/release/activity-ledger --artifacts .build/web-artifacts-bench

clean:
	rm -rf .build
