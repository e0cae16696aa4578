# gpuopt-lint: the two commands of the README's Quick start, and the package and release.
#   make run      - install what building needs, build, lint samples/
#   make test     - install that and what the tests drive, build, run every test through ctest
#   make package  - build the .deb ($(BUILD)/gpuopt-lint_<version>_amd64.deb)
#   make release  - check the version everywhere, build the .deb, tag v<version> (scripts/release.sh)
MAKEFLAGS += --no-print-directory
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: run test build build-tool setup setup-test configure clean bench package release fuzz sanitize

setup:
	@scripts/setup.sh $(BUILD)

setup-test:
	@scripts/setup.sh --test $(BUILD)

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

test: setup-test build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

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

# The whole test suite built with AddressSanitizer and UndefinedBehaviorSanitizer (CMake build type
# Sanitize) in its own folder. Not part of `make test` (a second full build: see README).
SANITIZE_BUILD ?= build-sanitize
sanitize: setup
	@cmake -S . -B $(SANITIZE_BUILD) -DCMAKE_BUILD_TYPE=Sanitize -DGPUOPT_DEMOS=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(SANITIZE_BUILD) -j $(JOBS)
	@cd $(SANITIZE_BUILD) && ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)
