# gpuopt-lint: the two commands of the README's Quick start, and the package and release.
#   make run      - install what building needs, build, lint samples/
#   make test     - install that and what the tests drive, build, run every test through ctest; then
#                   the same suite again in a second build under ASan, LSan and UBSan (make sanitize)
#   make package  - build the .deb ($(BUILD)/gpuopt-lint_<version>_amd64.deb)
#   make release  - check the version everywhere, build the .deb, tag v<version> (scripts/release.sh)
MAKEFLAGS += --no-print-directory
BUILD ?= build
JOBS ?= $(shell nproc)
# Clang 22 compiles this project in both builds: ~30% less time and half the memory of GCC 12 per
# unit at -O3 (README, Quick start); `make RELEASE_CXX=g++ ...` builds the Release half with GCC.
RELEASE_CXX ?= clang++-22
CMAKE_FLAGS ?=

.PHONY: run test build build-tool setup setup-test configure clean bench package release fuzz sanitize sanitize-build

setup:
	@scripts/setup.sh $(BUILD)

setup-test:
	@scripts/setup.sh --test $(BUILD)

configure: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=$(RELEASE_CXX) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

build-tool: configure
	@cmake --build $(BUILD) -j $(JOBS) --target gpuopt-lint

run: build-tool
	@echo "== $(BUILD)/bin/gpuopt-lint samples/*.cu"
	@$(BUILD)/bin/gpuopt-lint samples/*.cu; rc=$$?; \
	  echo "== gpuopt-lint exit status $$rc (0 clean, 1 findings, 2 error)"; [ $$rc -le 1 ]

# Both suites run even when the first fails; either failing fails `make test`.
test: setup-test build sanitize-build
	@(cd $(BUILD) && ctest --output-on-failure -j $(JOBS)); rc=$$?; \
	  scripts/sanitize.sh $(SANITIZE_BUILD) $(JOBS); src=$$?; \
	  echo "== make test: suite $$( [ $$rc = 0 ] && echo passed || echo FAILED ) (ctest in $(BUILD)), sanitized suite $$( [ $$src = 0 ] && echo passed || echo FAILED ) ($(SANITIZE_BUILD))"; \
	  [ $$rc = 0 ] && [ $$src = 0 ]

# The .deb: the tool, its man page, completion, copyright and changelog (packaging/).
package: configure
	@cmake --build $(BUILD) -j $(JOBS) --target gpuopt-lint package-files
	@cd $(BUILD) && cpack -G DEB >/dev/null
	@ls $(BUILD)/gpuopt-lint_*.deb

release: package
	@scripts/release.sh $(BUILD)

bench: build
	@$(BUILD)/bin/gpuopt-bench samples/*.cu tests/fixtures/*.cu

# libFuzzer targets of the language server's and the result cache's readers, FUZZ_SECONDS each, in
# their own build folder (Clang, ASan, UBSan). Not part of `make test`: see tests/fuzz/CMakeLists.txt.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
fuzz: setup
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-22 \
	  -DGPUOPT_FUZZ=ON -DGPUOPT_DEMOS=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_jsonrpc fuzz_result_cache
	@scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# The whole test suite built with AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer
# (CMake build type Sanitize, clang++-22) in its own folder, without the demo kernels (nvcc code is
# not instrumented); scripts/sanitize.sh runs it and also fails on a report from any process the
# tests started. Part of `make test`; `make sanitize` runs only this half.
SANITIZE_BUILD ?= build-sanitize
sanitize-build: setup-test
	@cmake -S . -B $(SANITIZE_BUILD) -DCMAKE_BUILD_TYPE=Sanitize -DCMAKE_CXX_COMPILER=clang++-22 \
	  -DGPUOPT_DEMOS=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(SANITIZE_BUILD) -j $(JOBS)

sanitize: sanitize-build
	@scripts/sanitize.sh $(SANITIZE_BUILD) $(JOBS)

clean:
	rm -rf $(BUILD) $(SANITIZE_BUILD)
