# Keel's commands. `make run` and `make test` are the README's two commands; `make test` is what
# CI runs (.ci/run).
SWIFT ?= swift
# Slow suites (long crash loops, soaks, fuzzing) run only with KEEL_SLOW_TESTS=1: `make test-slow`.

.PHONY: run test test-slow build keelctl bench bench-quick bench-client deps format clean

deps:
	@scripts/ensure-deps.sh

build: deps
	$(SWIFT) build

# Builds keeld and serves ./.keel/data with config/model.json on ./.keel/keeld.sock
# (config/keeld.json holds every setting). Ctrl-C stops it cleanly.
run: deps
	$(SWIFT) build --product keeld
	.build/debug/keeld

# The admin tool, .build/debug/keelctl (Docs/Operations.md, "keelctl").
keelctl: deps
	$(SWIFT) build --product keelctl

# --build-tests builds every product too: the integration tests start the real .build/debug/keeld.
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

test-slow: deps
	$(SWIFT) build --build-tests
	KEEL_SLOW_TESTS=1 $(SWIFT) test --skip-build

# The benchmark package's build plan lists Keel's files as they were when it was made: a source
# file added to Keel since is "not found" until the plan is made again (SwiftPM keeps a path
# dependency's plan until its own manifest changes), so it is dropped first.
BENCH_PLAN = rm -f Benchmarks/.build/release/description.json

bench: 
	@scripts/ensure-deps.sh --bench
	$(BENCH_PLAN)
	cd Benchmarks && $(SWIFT) run -c release keel-bench

bench-quick:
	@scripts/ensure-deps.sh --bench
	$(BENCH_PLAN)
	cd Benchmarks && $(SWIFT) run -c release keel-bench --quick

# KeelConnection against raw protocol lines, GET by ID, against a release keeld (Performance.md, "Client").
bench-client:
	scripts/bench-client.sh

clean:
	rm -rf .build Benchmarks/.build
