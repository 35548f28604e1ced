# The two commands a new user runs: `make demo` (the whole flow) and `make test`.
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)

.PHONY: deps build release demo test bench killloop kill-serve consentloop fuzz clean

deps:
	@scripts/ensure-deps.sh

build: deps
	$(SWIFT) build

# The binary to install: .build/release/vaultctl, optimized, with the Swift runtime linked in (it
# runs where no Swift toolchain is installed, starts without loading the runtime's libraries, and
# calls into it directly; docs/benchmarks-history.md, "Exclusivity checks and the Swift runtime linked in").
release: deps
	$(SWIFT) build -c release --static-swift-stdlib --product vaultctl

# vaultctl demo generates its data with healthvault-demo, built beside it.
demo: deps
	$(SWIFT) build --product healthvault-demo
	$(SWIFT) build --product vaultctl
	.build/debug/vaultctl demo

test:
	@scripts/ensure-deps.sh --test
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

# Release build of the benchmarks and their anchor; docs/benchmarks.md records their output.
bench: deps
	SWIFT=$(SWIFT) scripts/bench.sh

# The full kill loop (CI runs 100 kills inside `make test`).
killloop: deps
	$(SWIFT) build --build-tests
	HEALTHVAULT_KILLS=1000 $(SWIFT) test --skip-build --filter KillLoopTests

# The companion server SIGKILLed 100 times under load (CI runs 4 inside `make test`).
kill-serve: deps
	$(SWIFT) build --build-tests
	HEALTHVAULT_SERVE_KILLS=100 $(SWIFT) test --skip-build --filter ServerKillTests

# The consent property test over 1,000 random histories (CI runs 30 inside `make test`).
consentloop: deps
	$(SWIFT) build --build-tests
	HEALTHVAULT_CONSENT_ROUNDS=1000 $(SWIFT) test --skip-build --filter ConsentExportTests

# libFuzzer over every parser of untrusted bytes, FUZZ_SECONDS (default 60) per target; findings
# land in Fuzz/regressions/, which `make test` replays. See docs/reliability.md.
fuzz: deps
	SWIFT=$(SWIFT) scripts/fuzz.sh

clean:
	rm -rf .build
