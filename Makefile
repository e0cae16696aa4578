# gpuopt-lint: the two commands of the README's Quick start.
#   make run   - install what is missing, build, lint samples/
#   make test  - install what is missing, build, run every test through ctest
MAKEFLAGS += --no-print-directory
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: run test build build-tool setup configure clean bench

setup:
	@scripts/setup.sh $(BUILD)

configure: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

build-tool: configure
	@cmake --build $(BUILD) -j $(JOBS) --target gpuopt-lint

run: build-tool
	@echo "== $(BUILD)/bin/gpuopt-lint samples/*.cu"
	@$(BUILD)/bin/gpuopt-lint samples/*.cu; rc=$$?; \
	  echo "== gpuopt-lint exit status $$rc (0 clean, 1 findings, 2 error)"; [ $$rc -le 1 ]

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	@$(BUILD)/bin/gpuopt-bench samples/*.cu tests/fixtures/*.cu

clean:
	rm -rf $(BUILD)
