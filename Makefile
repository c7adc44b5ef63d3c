# Sluice — make targets. `make run` starts a single-node broker on
# 127.0.0.1:9092 with data in ./data; `make cluster` starts three nodes on
# this machine (clients on 9092-9094, controllers on 9095-9097, data in
# ./data/cluster); `make test` runs everything CI runs.

GO        ?= go
BIN       := bin/sluice
PKGS      := ./...
SIM_SEEDS ?= 1-2000
# The sweep make test runs: about a minute on two cores; on a slower
# machine the time box stops it early (the seeds run are a prefix).
SIM_TEST_SEEDS ?= 1-5000
SIM_TEST_TIME_BOX ?= 3m

.PHONY: build run cluster test test-race test-short vet sim fuzz clean bench-peers

# The commit is stamped into the binary (`sluice version`, a simulator
# failure's replay advice) even where GOFLAGS turns stamping off, but only
# where git answers for the tree: a tree without git, or one git refuses
# (another user's checkout), builds unstamped rather than failing.
BUILDVCS := $(shell git rev-parse --is-inside-work-tree >/dev/null 2>&1 && echo auto || echo false)
build:
	$(GO) build -buildvcs=$(BUILDVCS) -o $(BIN) ./cmd/sluice

run: build
	$(BIN) broker --node-id 1 --listen 127.0.0.1:9092 --data ./data

# Three nodes, each broker and controller, as child processes; Ctrl-C
# stops them all.
cluster: build
	$(BIN) cluster --nodes 3 --port 9092 --data ./data/cluster

# The whole suite: vet, unit/property/guard tests, the simulator's seeds and
# canaries, real-client tests against the real binary, fuzz corpora.
test: vet build
	$(GO) test -count=1 -timeout 18m $(PKGS)
	$(BIN) sim --seeds $(SIM_TEST_SEEDS) --time-box $(SIM_TEST_TIME_BOX) --workers 2
	cd cmd/bench-peers && $(GO) vet ./... && $(GO) test -count=1 ./...
	$(MAKE) test-race

# The race detector over what runs goroutines (core/ runs none): the
# node's event loop, the sockets, the disk's sync workers and the fault
# harness's proxies and clients; seeds of every simulated workload run at
# once, and the sweep's workers; then a race-built binary as a 3-node
# cluster and as the harness driving it, 30 s of faults, failing on any
# race a node or the harness reports (the nodes' stderr is in their
# logs). About 4 minutes.
RACE_RESULTS := jepsen-results/race
# A fixed nemesis seed: the same fault schedule every run, so a failure
# reruns as it happened (timing aside).
RACE_SEED ?= 7
test-race:
	$(GO) test -race -count=1 ./node/... ./net/... ./disk/... ./jepsen/harness
	$(GO) test -race -count=1 -run TestSeedsRunAtOnceShareNothing ./sim/catalog
	$(GO) test -race -count=1 -run 'Sweep|Twice' ./sim
	$(GO) build -race -buildvcs=$(BUILDVCS) -o bin/sluice-race ./cmd/sluice
	rm -rf $(RACE_RESULTS)
	bin/sluice-race jepsen --binary bin/sluice-race --nodes 3 --duration 30s --seed $(RACE_SEED) --out $(RACE_RESULTS)
	@logs="$$(find $(RACE_RESULTS) -name 'node-*.log')"; \
	if [ -z "$$logs" ]; then echo "test-race: no node logs under $(RACE_RESULTS) to look for races in"; exit 1; fi; \
	if grep -l "DATA RACE" $$logs; then echo "test-race: a node reported a data race (the logs above)"; exit 1; fi

# The fast subset (guards, unit tests) for the edit-compile loop.
test-short:
	$(GO) test -count=1 -short $(PKGS)

vet:
	$(GO) vet $(PKGS)
	@unformatted="$$(gofmt -l $$(git ls-files '*.go'))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi

# A sweep of the default workload; override with SIM_SEEDS=1-100000 or
# `bin/sluice sim --workload log --seeds ...`.
sim: build
	$(BIN) sim --seeds $(SIM_SEEDS)

# Sluice against its peers (kfake, NATS JetStream, a raw TCP-to-file
# baseline) on loopback: one table per record size with ratios, median of
# 3 runs, about 15 minutes. The peers live in the nested module
# cmd/bench-peers, outside this module's dependencies; the first run on a
# fresh machine downloads them through the Go module proxy.
# BENCH_PEERS_FLAGS=--quick is a one-minute smoke test.
BENCH_PEERS_FLAGS ?=
bench-peers: build
	cd cmd/bench-peers && $(GO) build -o ../../bin/bench-peers .
	bin/bench-peers --sluice-binary $(BIN) $(BENCH_PEERS_FLAGS)

# The black-box fault harness: a 3-node cluster of the real binary on
# loopback behind fault proxies, kgo producers (acks=all, idempotent and
# not) and consumers (by assignment and in a group), 4 minutes of kill -9,
# SIGSTOP, partitions, rolling restarts and full-cluster kills, then
# recovery, a full read-back and the checkers, while an operator deletes
# what the group consumed every 2 s; about 5 minutes. Results
# (verdict.txt, history.jsonl, report.html with plots, node logs) go to
# jepsen-results/<timestamp>/. JEPSEN_FLAGS adds flags, e.g.
# JEPSEN_FLAGS="--power-check --duration 60s" (see `bin/sluice jepsen -h`).
.PHONY: jepsen
JEPSEN_FLAGS ?=
jepsen: build
	$(BIN) jepsen --nodes 3 --duration 4m --faults kill,pause,partition,rolling,full-kill --acks all --idempotence mixed --delete-every 2s --recreate-every 2s --elect-every 1s --out jepsen-results $(JEPSEN_FLAGS)

# Open-ended fuzzing of what parses untrusted bytes: request frames
# (core/wire), record batches (core/batch), metadata records read back
# from the metadata log (core/metadata) and index files (core/log). Their seed corpora already run in
# `make test`; this explores FUZZTIME per target.
FUZZTIME ?= 1m
fuzz:
	$(GO) test -run XXX -fuzz FuzzDecodeRequest -fuzztime $(FUZZTIME) ./core/wire
	$(GO) test -run XXX -fuzz FuzzValidate -fuzztime $(FUZZTIME) ./core/batch
	$(GO) test -run XXX -fuzz FuzzDecodeEncoded -fuzztime $(FUZZTIME) ./core/metadata
	$(GO) test -run XXX -fuzz FuzzDecodeIndexFiles -fuzztime $(FUZZTIME) ./core/log

clean:
	rm -rf bin
