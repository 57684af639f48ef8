# slurm-frontend: make targets a newcomer can guess.
GO      ?= go
BIN     := bin/slurm-frontend
PKGS    := ./...
STATE   ?= $(CURDIR)/.state
LISTEN  ?= 0.0.0.0:6817

.PHONY: bench-writes bench-bulk bench-ratelimit bench-backendai bench-srun all build setup run test test-unit test-e2e bench lint fuzz reliability clean install

all: build

build:
	$(GO) build -o $(BIN) ./cmd/slurm-frontend
	$(GO) build -o $(BIN)-shim ./cmd/slurm-frontend-shim

# Installs munge, the real Slurm 22.05/24.11/26.05 clients (host, trixie and
# sid roots) and Go modules. Idempotent; needs root and Debian's archive.
setup:
	bash tools/install.sh
	$(GO) mod download

# Runs the service on its embedded engine (this host as one node, one
# partition), state under .state/.
run: build
	$(BIN) serve --state-dir $(STATE) --listen $(LISTEN)

# The whole suite: installs what it needs, then unit, fuzz-seed and
# end-to-end tests with the real clients of every release.
test: setup
	SLURM_FRONTEND_E2E=1 $(GO) test -count=1 -timeout 85m $(PKGS)

test-unit:
	$(GO) test -count=1 -short $(PKGS)

# The side-by-side storm (tools/bench.sh), then the Go micro-benchmarks
# (allocations per request included). The storm: slurm-frontend vs a real
# slurmctld 24.11 vs a null server, filled with the same 4, 1,000 and
# 10,000 held jobs; prints the ratios, writes bench-report.html and
# bench-report.json (about 8 minutes on 2 cores).
# `make bench JOBS=20000` changes the largest queue; `make bench QUICK=1`
# stops at 1,000 jobs with short windows (see tools/bench.sh for more).
bench: build
	BIN=$(CURDIR)/$(BIN) bash tools/bench.sh
	$(GO) test -run '^$$' -bench . -benchmem ./codec/... ./edge/... ./translate/... ./bench/...

# The write path (tools/bench-writes.sh): sbatch --hold storms and the
# mixed storm at 1, 16 and 64 clients, slurm-frontend beside a real
# slurmctld 24.11 in one run (about 3 minutes on 2 cores).
bench-writes: build
	BIN=$(CURDIR)/$(BIN) bash tools/bench-writes.sh

# Bulk writes under a squeue storm (tools/bench-bulk.sh): scancel of
# 100,000 pending jobs and a 100,000-task array, ours and a real 24.11.
bench-bulk: build
	BIN=$(CURDIR)/$(BIN) bash tools/bench-bulk.sh

# slurm-frontend on the Backend.AI manager double (scale mode) beside the
# embedded engine, in one run (JOBS=100000 by default; JOBS=10000 is quick).
bench-backendai: build
	BIN=$(CURDIR)/$(BIN) bash tools/bench-backendai.sh

# srun on slurm-frontend (embedded engine) beside a real slurmctld + slurmd
# 24.11, the same stock 24.11 srun against both, run by run in turn:
# launch latency (-n1, -n16) and stdout throughput (RUNS=30 by default,
# about 3 minutes on 2 cores; see tools/bench-srun.sh for the knobs).
bench-srun: build
	BIN=$(CURDIR)/$(BIN) bash tools/bench-srun.sh

# One user's squeue storm at 10x the per-user rate limit beside another
# user's squeue, with and without the limit, in one run (stock 24.11
# clients, about 3 minutes): the victim's latency ratio and the
# stormer's back-offs (tools/bench-ratelimit.sh).
bench-ratelimit:
	bash tools/bench-ratelimit.sh

# The hardening campaign: every fuzz target briefly (RELIABILITY_FUZZTIME,
# default 10s), then the hostile-input, credential, permission, security,
# fault and load tests with the stock clients; one line per test with its
# figures (under 30 minutes on 2 cores). Full output in reliability.log.
reliability: setup
	bash tools/reliability.sh

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet $(PKGS)

# Every fuzz target for FUZZTIME each (`make fuzz FUZZTIME=10m` is the
# recorded campaign: about 7 hours on one core); one line per target in
# fuzz-report.txt. Crashers stay under testdata/fuzz/ as regression seeds.
FUZZTIME ?= 20s
fuzz:
	bash tools/fuzz.sh $(FUZZTIME) fuzz-report.txt

# The server, its shim and a systemd unit (KillMode=process: jobs outlive
# a restart): `make install`, then put the cluster's slurm.conf in
# /etc/slurm-frontend and `systemctl enable --now slurm-frontend`.
# PREFIX (default /usr/local) and DESTDIR as usual. The shim's directory
# must be root's alone (the server checks before running it as root).
PREFIX  ?= /usr/local
SBINDIR := $(PREFIX)/sbin
DOCDIR  := $(PREFIX)/share/doc/slurm-frontend
UNITDIR ?= /etc/systemd/system
install: build
	install -d -m 0755 $(DESTDIR)$(SBINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(DOCDIR) $(DESTDIR)/etc/slurm-frontend
	install -d -m 0700 $(DESTDIR)/var/lib/slurm-frontend
	install -m 0755 $(BIN) $(BIN)-shim $(DESTDIR)$(SBINDIR)/
	install -m 0644 README.md $(DESTDIR)$(DOCDIR)/
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' tools/systemd/slurm-frontend.service \
		>$(DESTDIR)$(UNITDIR)/slurm-frontend.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/slurm-frontend.service

clean:
	rm -rf bin .state
