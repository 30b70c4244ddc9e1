# ActivityLedger — `make run` starts the product, `make test` builds and runs every test.
SWIFT ?= swift
DB ?= ./ledger.sqlite
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps build release run test bench fuzz-api clean

# Installs the system libraries the build links against, only when missing.
deps:
	@missing=""; \
	for p in libzstd-dev libsqlite3-dev pkg-config; do \
		dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

run: release
	.build/release/activity-ledger serve --db $(DB)

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

bench: release
	.build/release/ledger-bench

clean:
	rm -rf .build
