# Sluice — make targets. `make run` starts a single-node broker on
# 127.0.0.1:9092 with data in ./data; `make cluster` starts three nodes on
# this machine (clients on 9092-9094, controllers on 9095-9097, data in
# ./data/cluster); `make test` runs everything CI runs.

GO        ?= go
BIN       := bin/sluice
PKGS      := ./...
SIM_SEEDS ?= 1-2000

.PHONY: build run cluster test test-short vet sim fuzz clean

build:
	$(GO) build -o $(BIN) ./cmd/sluice

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

clean:
	rm -rf bin
