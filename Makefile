# Keel's commands. `make test` is the README's test command and what CI runs (.ci/run).
SWIFT ?= swift
# Slow suites (long crash loops, soaks, fuzzing) run only with KEEL_SLOW_TESTS=1: `make test-slow`.

.PHONY: test test-slow build bench bench-quick deps format clean

deps:
	@scripts/ensure-deps.sh

build: deps
	$(SWIFT) build

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

test-slow: deps
	$(SWIFT) build --build-tests
	KEEL_SLOW_TESTS=1 $(SWIFT) test --skip-build

bench: 
	@scripts/ensure-deps.sh --bench
	cd Benchmarks && $(SWIFT) run -c release keel-bench

bench-quick:
	@scripts/ensure-deps.sh --bench
	cd Benchmarks && $(SWIFT) run -c release keel-bench --quick

clean:
	rm -rf .build Benchmarks/.build
