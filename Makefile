# drover - top-level entry points.  `make demo` and `make check` are the two
# commands a new user needs; both install what they need first.
GEN := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
CLANG := $(shell command -v clang >/dev/null 2>&1 && echo clang)
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all build asan bootstrap check test test-asan demo demo-sim bench chaos lint format clean

all: build

bootstrap:
	@scripts/bootstrap

build/build.ninja build/Makefile:
	cmake -S . -B build $(GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: build/build.ninja
	cmake --build build -j $(JOBS)

# Sanitizer build: clang when present (it also builds the libFuzzer targets).
build-asan/build.ninja:
	cmake -S . -B build-asan $(GEN) -DCMAKE_BUILD_TYPE=Debug -DDROVER_SANITIZE=ON \
	  $(if $(CLANG),-DCMAKE_C_COMPILER=clang -DDROVER_FUZZ=ON)

asan: build-asan/build.ninja
	cmake --build build-asan -j $(JOBS)

test: build
	ctest --test-dir build --output-on-failure -j $(JOBS)

test-asan: asan
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir build-asan --output-on-failure -j $(JOBS)

check: bootstrap
	$(MAKE) test
	$(MAKE) test-asan
	$(MAKE) lint
	@echo "make check: all suites passed (normal and ASan+UBSan builds)"

# the live cluster: controller, agents, a mixed workload (scripts/demo);
# KEEP=1 keeps it running afterwards (for the web dashboard) until Ctrl-C
demo: bootstrap build
	KEEP=$(KEEP) scripts/demo

# the simulator on real traces (scripts/demo-sim)
demo-sim: bootstrap build
	scripts/demo-sim

bench: bootstrap build
	build/bench/sim_scale
	build/bench/ctld_scale --nodes 10000 --jobs 150000 --clients 16 --runtime 1800-3600 --duration 30 --kill-node
	sh bench/vs_slurm

# the chaos suite's long runs: 10 consecutive seeded runs and a table of their
# invariant counts (tests/chaos/README.md); CHAOS_ARGS="--seed N --runs M ..."
chaos: bootstrap build
	python3 tests/chaos/campaign.py --runs 10 $(CHAOS_ARGS)

lint:
	@scripts/lint

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan
