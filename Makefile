# onnxviz — plain Makefile.
#
#   make            build build/onnxviz
#   make run        build and serve on 127.0.0.1:8080 with the store in ./data
#   make test       install missing dependencies, build, run every test
#   make deps       install the Debian packages the build and the tests need
#   make bench-deps the same plus what the benchmarks use (torch, torchvision, pydot, PIL)
#   make SANITIZE=address,undefined test   the same under ASan+UBSan (into build-san/)
#   make fuzz FUZZ_SECONDS=N               run each libFuzzer target N seconds
#   make bench      the benchmark scripts under tests/bench/
#   make schemas ONNX_SRC=... ORT_CONTRIB=...  regenerate parser/schema_table.c
#
# Every module folder (parser/, diff/, render/, store/, service/) is compiled from its *.c files;
# service/main.c is the program's entry point.  Unit tests are tests/unit/test_*.c,
# one cmocka program each.

CC      ?= cc
SANITIZE ?=
ifneq ($(SANITIZE),)
BUILD   ?= build-san
SANFLAGS := -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
else
BUILD   ?= build
SANFLAGS :=
endif

OPT     ?= -O2
WARN    := -Wall -Wextra -Wshadow -Wconversion -Wsign-conversion -Wstrict-prototypes \
           -Wmissing-prototypes -Wpointer-arith -Wvla -Wformat=2 -Wundef -Werror
CFLAGS_ALL = -std=c17 -D_GNU_SOURCE -g $(OPT) $(WARN) $(SANFLAGS) -I. -I$(BUILD)/gen \
             $(shell pkg-config --cflags libgvc 2>/dev/null) $(CFLAGS)
GVPLUGDIR := $(shell pkg-config --variable=libdir libgvc 2>/dev/null)/graphviz
# Graphviz and its dot and core plugins are loaded when the first layout needs them
# (render/layout.c, dlopen) and the plugins registered by the program itself, so layouts
# work without the plugin configuration file (docs/decisions.md).  The plugins are opened
# by their full path in Graphviz's own folder: a run path would not do, because under
# AddressSanitizer dlopen is called from libasan, whose run path is not the program's.
CFLAGS_ALL += -DOXR_GVPLUGDIR='"$(GVPLUGDIR)"'
LIBS     = -ljansson -lm -lpthread
# librsvg and cairo (render/raster.c) are loaded when the first PNG is drawn (dlopen, like
# Graphviz): only their headers are needed here, for that one file, as system headers
# (GLib's do not keep to our warnings).
RSVG_CFLAGS := $(patsubst -I%,-isystem %,$(shell pkg-config --cflags librsvg-2.0 cairo 2>/dev/null))
LDFLAGS_ALL = $(SANFLAGS) $(LDFLAGS)
# The programs export raster.c's cairo_fill_extents so that librsvg, loaded later, calls it
# instead of cairo's while one of our drawings is rasterized (a bounding box nothing reads,
# without tessellating every label: render/raster.c, docs/decisions.md 95).
BIN_LDFLAGS := -Wl,--export-dynamic-symbol=cairo_fill_extents

PARSER_SRC  := $(wildcard parser/*.c)
DIFF_SRC    := $(wildcard diff/*.c)
RENDER_SRC  := $(wildcard render/*.c)
STORE_SRC   := $(wildcard store/*.c)
SERVICE_SRC := $(filter-out service/main.c,$(wildcard service/*.c))
WEB_FILES   := $(sort $(wildcard web/*.html web/*.css web/*.js web/*.svg))
WEB_GEN     := $(BUILD)/gen/web_assets.c

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
PARSER_OBJ  := $(call obj,$(PARSER_SRC))
# The parser's hot loops (wire reader, decoder, dtype conversion) gain ~7% at -O3
# (tests/bench/parse.sh); OPT given on the command line still wins.
$(PARSER_OBJ): OPT := -O3
DIFF_OBJ    := $(call obj,$(DIFF_SRC))
RENDER_OBJ  := $(call obj,$(RENDER_SRC))
STORE_OBJ   := $(call obj,$(STORE_SRC))
SERVICE_OBJ := $(call obj,$(SERVICE_SRC)) $(BUILD)/obj/gen/web_assets.o
SERVICE_OBJ += $(BUILD)/obj/gen/openapi.o
OPENAPI_GEN := $(BUILD)/gen/openapi.c
ALL_OBJ     := $(PARSER_OBJ) $(DIFF_OBJ) $(RENDER_OBJ) $(STORE_OBJ) $(SERVICE_OBJ)

UNIT_SRC    := $(wildcard tests/unit/test_*.c)
UNIT_BIN    := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
UNIT_SUPPORT:= $(call obj,$(wildcard tests/unit/support_*.c))

TOOLS_SRC   := $(wildcard tests/tools/*.c)
TOOLS_BIN   := $(patsubst tests/tools/%.c,$(BUILD)/tools/%,$(TOOLS_SRC))

BIN := $(BUILD)/onnxviz

.PHONY: all run test check unit tools deps deps-build print-deps-test bench-deps clean fuzz bench docker-check lint clang-check sanitize-build schemas
.DEFAULT_GOAL := all

all: $(BIN)

ifeq ($(V),1)
Q :=
else
Q := @
endif

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(BUILD)/obj/render/raster.o: CFLAGS_ALL += $(RSVG_CFLAGS)

$(BUILD)/obj/gen/web_assets.o: $(WEB_GEN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(WEB_GEN): $(WEB_FILES) web/embed.sh
	@mkdir -p $(dir $@)
	sh web/embed.sh $@ $(WEB_FILES)

# service/openapi.json, embedded like the web page (served at /openapi.json).
$(BUILD)/obj/gen/openapi.o: $(OPENAPI_GEN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(OPENAPI_GEN): service/openapi.json service/embed-openapi.sh
	@mkdir -p $(dir $@)
	sh service/embed-openapi.sh $@ service/openapi.json

$(BUILD)/libonnxviz.a: $(ALL_OBJ)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(BIN): $(BUILD)/obj/service/main.o $(BUILD)/libonnxviz.a
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS_ALL) $(BIN_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(UNIT_SUPPORT) $(BUILD)/libonnxviz.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS) -lcmocka

# The fault-injection build of the service (tests/preview/isolation.py): the same program
# with the files below compiled with OXS_FAULT_INJECTION, so that a preview of a tensor
# named __fault_fpe, __fault_segv or __fault_hang, or the document of a model whose graph
# is named __fault_doc_segv, faults as a bug would.
FAULT_BIN := $(BUILD)/onnxviz-fault
FAULT_SRC := service/preview.c service/artifacts.c
FAULT_OBJ := $(patsubst %.c,$(BUILD)/obj-fault/%.o,$(FAULT_SRC))
$(BUILD)/obj-fault/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (fault injection)")
	$(Q)$(CC) $(CFLAGS_ALL) -DOXS_FAULT_INJECTION -MMD -MP -c $< -o $@

$(FAULT_BIN): $(BUILD)/obj/service/main.o $(FAULT_OBJ) $(BUILD)/libonnxviz.a
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS_ALL) $(BIN_LDFLAGS) -o $@ $^ $(LIBS)

# Test tools (tests/tools/*.c): small programs the test scripts drive, linked like tests.
$(BUILD)/tools/%: $(BUILD)/obj/tests/tools/%.o $(BUILD)/libonnxviz.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)

tools: $(TOOLS_BIN)

# Fuzz targets (tests/fuzz/fuzz_*.c).  In every build each is linked with
# tests/fuzz/replay.c into $(BUILD)/fuzz/replay_<name>, a plain program that replays the
# target's corpus and saved crashers (tests/fuzz/run.sh, part of `make test`).  `make fuzz`
# builds them with libFuzzer into build-fuzz/ and runs each for FUZZ_SECONDS.
FUZZ_SRC    := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES  := $(patsubst tests/fuzz/fuzz_%.c,%,$(FUZZ_SRC))
REPLAY_BIN  := $(patsubst %,$(BUILD)/fuzz/replay_%,$(FUZZ_NAMES))

$(BUILD)/fuzz/replay_%: $(BUILD)/obj/tests/fuzz/fuzz_%.o $(BUILD)/obj/tests/fuzz/replay.o \
                        $(BUILD)/libonnxviz.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)

.SECONDARY: $(patsubst %,$(BUILD)/obj/tests/fuzz/fuzz_%.o,$(FUZZ_NAMES)) $(BUILD)/obj/tests/fuzz/replay.o
.PHONY: fuzz-replay
fuzz-replay: $(REPLAY_BIN)

-include $(shell find $(BUILD)/obj $(BUILD)/obj-fault -name '*.d' 2>/dev/null)

# ---------------------------------------------------------------------------------------
# Dependencies (Debian packages).  Installed with apt-get (sudo when not root), skipping
# what is present.  DEPS_BUILD is what `make run` needs; DEPS_TEST adds what the tests use.
DEPS_BUILD := gcc make pkg-config libc6-dev libmicrohttpd-dev libgraphviz-dev libjansson-dev \
              libssl-dev libcurl4-openssl-dev zlib1g-dev librsvg2-dev
DEPS_TEST  := $(DEPS_BUILD) libcmocka-dev clang libclang-rt-14-dev curl python3 python3-onnx \
              python3-numpy python3-jsonschema libxml2-utils strace librsvg2-bin wrk graphviz \
              nodejs chromium debootstrap time
# the http suite makes the store fail to start an upload: chattr +i on its uploads folder
DEPS_TEST  += e2fsprogs
# the docker suite: ip (loopback in its network namespace), python3-yaml (compose.yaml)
DEPS_TEST  += iproute2 python3-yaml
# the s3 suite: a single-node Ceph cluster with its S3 gateway (RGW), and a load balancer
DEPS_TEST  += ceph-mon ceph-osd radosgw ceph-common haproxy
# the modeldiff suite reads the diffs' Markdown through GitHub's renderer (cmark-gfm) and
# checks docs/github-actions-diff.yml as YAML (python3-yaml, above)
DEPS_TEST  += cmark-gfm
# the render suite measures text with the real DejaVu Sans (tests/render/textfit.py)
DEPS_TEST  += python3-pil fonts-dejavu-core
# real PyTorch exports for the differential tests (tests/diff/folded.py, the quantized
# torchvision models, the modeldiff suite's pairs at two opsets): torch 1.13 and
# torchvision 0.14, random weights, nothing downloaded
DEPS_TEST  += python3-torch python3-torchvision
# the render suite also measures the Liberation fonts (tests/render/widths.py); the diff
# suite builds protobuf descriptors (python3-protobuf); monmaptool (s3) is in ceph-base;
# readelf and ldd (docker), unshare and mount (docker, hostile) come with the system, and
# are named so that tests/prereqs.tsv, which names them, stays within this list
DEPS_TEST  += fonts-liberation2 python3-protobuf ceph-base binutils libc-bin util-linux mount
# Every prerequisite of every suite is a row of tests/prereqs.tsv naming its package; the
# deps suite (tests/deps/run.sh, first in `make test`) fails when one is not in DEPS_TEST.
define install_missing
	@missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null \
	    | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

deps:
	$(call install_missing,$(DEPS_TEST))

# the list the deps suite compares tests/prereqs.tsv with
print-deps-test:
	@echo $(DEPS_TEST)

deps-build:
	$(call install_missing,$(DEPS_BUILD))

# The benchmarks (not part of `make test`): tests/bench/render.sh exports torchvision models
# and compares with onnx's net_drawer (pydot); its drawing checks measure text with PIL.
DEPS_BENCH := $(DEPS_TEST) python3-pydot
bench-deps:
	$(call install_missing,$(DEPS_BENCH))

# ---------------------------------------------------------------------------------------
run: deps-build
	$(MAKE) all
	$(BIN) serve

unit: $(UNIT_BIN)
	@sh tests/run-unit.sh $(UNIT_BIN)

# The README's test command.  Installs what is missing, builds everything the suites run
# (one parallel make: JOBS, default the core count), then runs every suite in order;
# tests/run-all.sh prints a summary, the time budget (the build's seconds included), and
# fails when any suite fails.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
test: deps
	@t0=$$(date +%s); \
	$(MAKE) -j$(JOBS) all $(UNIT_BIN) $(TOOLS_BIN) $(REPLAY_BIN) $(FAULT_BIN) || exit 1; \
	echo "build: $$(( $$(date +%s) - t0 )) s (make -j$(JOBS))"; \
	BUILD=$(BUILD) ONNXVIZ_BUILD_SECONDS=$$(( $$(date +%s) - t0 )) sh tests/run-all.sh

check: test

clang-check:
	$(MAKE) -j$(JOBS) CC=clang BUILD=build-clang all $(patsubst $(BUILD)/%,build-clang/%,$(UNIT_BIN) $(TOOLS_BIN))

# Everything the sanitize suite runs (tests/sanitize/run.sh), built with ASan + UBSan into
# build-san/.  tests/run-all.sh makes it, and clang-check, in the background while the first
# suites run.
sanitize-build:
	$(MAKE) SANITIZE=address,undefined BUILD=build-san all \
	    $(patsubst $(BUILD)/%,build-san/%,$(UNIT_BIN) $(TOOLS_BIN) $(REPLAY_BIN) $(FAULT_BIN))

bench: all
	BUILD=$(BUILD) sh tests/bench/run.sh

# libFuzzer runs: the library and each target built by clang with
# -fsanitize=fuzzer,$(FUZZ_SAN) into build-fuzz/; each target runs FUZZ_SECONDS with
# its committed corpus (tests/fuzz/corpus/<name>/) and a work folder outside git
# (build-fuzz/work/<name>/, where new inputs go); crashers land in build-fuzz/crashes/<name>/
# (copy them to tests/fuzz/regressions/<name>/).  tests/fuzz/fuzz.sh prints runs/s and
# coverage per target.
# FUZZ_TARGETS picks some targets (e.g. FUZZ_TARGETS="graph tensor"); default: all.
# FUZZ_SAN: clang's "undefined" leaves out float-divide-by-zero, so it is named (and
# integer-divide-by-zero with it, to say both are meant); every report traps
# (-fno-sanitize-recover=all, from SANITIZE).  Where a division by zero is intended is
# written down in docs/fuzzing.md.
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_TARGETS ?= $(FUZZ_NAMES)
FUZZ_SAN     := address,undefined,float-divide-by-zero,integer-divide-by-zero
fuzz:
	$(MAKE) CC=$(FUZZ_CC) BUILD=build-fuzz SANITIZE=$(FUZZ_SAN) \
	    CFLAGS="$(CFLAGS) -fsanitize=fuzzer-no-link" build-fuzz/libonnxviz.a \
	    $(patsubst %,build-fuzz/obj/tests/fuzz/fuzz_%.o,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do \
	  $(FUZZ_CC) -fsanitize=fuzzer,$(FUZZ_SAN) -o build-fuzz/fuzz_$$t \
	      build-fuzz/obj/tests/fuzz/fuzz_$$t.o build-fuzz/libonnxviz.a $(LIBS) || exit 1; \
	done
	sh tests/fuzz/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# The operator-schema table (parser/schema_table.c, committed; not part of `make`):
# regenerate it from an onnx checkout and onnxruntime's docs/ContribOperators.md
# (docs/schemas.md says which versions and where to get them).
ONNX_SRC    ?=
ORT_CONTRIB ?=
ONNX_REF    ?= onnx ($(ONNX_SRC))
ORT_REF     ?= onnxruntime ($(ORT_CONTRIB))
schemas:
	@[ -n "$(ONNX_SRC)" ] && [ -n "$(ORT_CONTRIB)" ] || \
	  { echo "make schemas ONNX_SRC=<onnx checkout> ORT_CONTRIB=<ContribOperators.md> (docs/schemas.md)"; exit 2; }
	/usr/bin/python3 tests/tools/gen_schemas.py --verify --onnx "$(ONNX_SRC)" \
	    --contrib "$(ORT_CONTRIB)" --onnx-ref "$(ONNX_REF)" --contrib-ref "$(ORT_REF)" \
	    --out parser/schema_table.c

clean:
	rm -rf build build-san build-clang build-fuzz build-cov

# The container image without a Docker engine (tests/docker/image-check.sh, as root):
# debootstrap Debian 12 (cached), replay docker/Dockerfile's build stage (compiles this
# tree as the build context) and its runtime stage with the binary built there, run the
# service in it as the image's user: /healthz, upload/render round trips, with and without
# Graphviz's plugin configuration.  `make test` runs the runtime part with $(BUILD)'s
# binary (docker suite); .ci/run calls this target after `make test`.
docker-check: all
	$(call install_missing,debootstrap curl graphviz python3 python3-yaml iproute2)
	BUILD=$(BUILD) bash tests/docker/image-check.sh --build-stage
