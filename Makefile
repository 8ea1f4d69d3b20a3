# smcscope — the two commands a fresh machine needs are `make demo` and `make test`.
GO          ?= go
BIN         := bin
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# The demo reads a capture made by this repository's own lab; before the first lab run
# the reference capture of the same scenario is used.
DEMO_SAMPLE ?= $(firstword $(wildcard samples/pingpong.pcap) testdata/reference/pingpong.pcap)
FUZZTIME    ?= 5m

.PHONY: all build demo test test-deps lab-kernel lint unit e2e samples fuzz bench pgo clean lab-clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -o $(BIN)/ ./cmd/...

# Set up and run the main job on a bundled sample.
demo: build
	@echo "== smcdump -r $(DEMO_SAMPLE) -c 25 (one line per SMC-relevant frame)"
	@$(BIN)/smcdump -r $(DEMO_SAMPLE) -c 25
	@echo; echo "== the decline of a server without RoCE device"
	@$(BIN)/smcdump -r $(firstword $(wildcard samples/decline-nordma.pcap) testdata/reference/decline-nordma.pcap) -Y 'smc.clc.type == 4'
	@echo; echo "== connections (-z smc,conns)"
	@$(BIN)/smcdump -q -r $(DEMO_SAMPLE) -z smc,conns
	@echo; echo "== link group of the failover capture (-z smc,lgr)"
	@$(BIN)/smcdump -q -r $(firstword $(wildcard samples/multilink.pcap) $(DEMO_SAMPLE)) -z smc,lgr
	@echo; echo "== smctop over the same capture (--once; without --once it is the live dashboard)"
	@$(BIN)/smctop -r $(firstword $(wildcard samples/multilink.pcap) $(DEMO_SAMPLE)) --once
	@echo; echo "== the same as the Prometheus exporter (smctop --listen): part of one scrape of /metrics"
	@scripts/demo-exporter $(firstword $(wildcard samples/multilink.pcap) $(DEMO_SAMPLE))
	@echo; echo "== the fleet view (smctop --prometheus): two hosts' halves of one link group, joined"
	@scripts/demo-fleet

# Everything CI runs: tools, lint, unit + differential tests, lab end-to-end tests.
test: test-deps lab-kernel lint unit e2e

# The lab's Linux 7.3 (lab/kernel/build.sh): on a cold cache it builds in the background
# (about 40 minutes on 2 cores) while lint and the unit tests run; cached, this returns at
# once. e2e's 7.3 run waits for it (the build holds the cache's lock). After test-deps,
# whose apt-get would otherwise race the build's.
lab-kernel:
	@lab/kernel/build.sh --background

test-deps:
	@scripts/test-deps

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

# Past go test's 10-minute default per package: output's tests take 4-8 minutes on an idle
# 2-core machine, more on a busy one.
unit:
	$(GO) test -count=1 -timeout 45m ./...
	# The concurrent parts (dashboard, browser, exporter, monitor, the ordered pass) under the race detector.
	$(GO) test -count=1 -timeout 45m -race ./tui/... ./metrics/ ./monitor/ ./internal/inorder/
	# smcdump -j: reading, decoding and writing in turn (a sample of the captures and modes).
	$(GO) test -count=1 -timeout 45m -race -run 'TestParallel' ./output/

# Boots the QEMU lab on Linux 6.12, then on the lab's 7.3, and drives the real binaries in
# it; skips a kernel with the reason where it cannot run. Its time limits are lab/run's
# (lab/run --limits). The last line says per kernel whether the lab ran, and how it went,
# or why it was skipped: a skip is not silent.
e2e:
	@status=$$(mktemp); \
	SMCSCOPE_E2E=1 SMCSCOPE_E2E_STATUS=$$status $(GO) test -count=1 -timeout $$(lab/run --go-test-timeout) -v ./lab/; rc=$$?; \
	if [ -s $$status ]; then cat $$status; else echo "lab e2e: no result (go test exited $$rc before the lab tests finished)"; fi; \
	rm -f $$status; exit $$rc

# Regenerate samples/ from the lab (root, qemu; run time in lab/README.md).
samples:
	lab/run all

# Fuzz every target for FUZZTIME each.
fuzz:
	@scripts/fuzz-all $(FUZZTIME)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./decode/ ./capture/ ./track/ ./filter/
	bench/compare.sh

# smcdump is built with profile-guided optimization (go build reads cmd/smcdump/default.pgo):
# 2.5-16 % faster, depending on the mode, in the modes bench/compare.sh times. The profile is
# the CPU profile of output's BenchmarkDecodePingpong, which runs those modes; regenerate it
# after changing the decode, output or tracker hot paths (a stale one still builds, it only
# helps less). 60 rounds, because with fewer the sampled profile decides which call sites
# count as hot; any new profile also moves where the linker puts the per-frame code, which
# alone moves the -Y ratios by a few percent (bench/README.md, History).
pgo:
	@tmp=$$(mktemp -d); \
	GOMAXPROCS=1 $(GO) test -run '^$$' -bench BenchmarkDecodePingpong -benchtime 60x -o $$tmp/output.test \
		-cpuprofile $(CURDIR)/cmd/smcdump/default.pgo ./output/; rc=$$?; rm -rf $$tmp; exit $$rc

clean:
	rm -rf $(BIN)

# The lab's cache (kernel package, modules, initramfs, run directories).
lab-clean:
	rm -rf lab/build
