# Set-up: `make run` builds and starts the engine; `make test` installs what the tests need
# (locally under .tools/ where possible) and runs them.
CARGO ?= cargo
RELEASE := target/release/pcn

.PHONY: all build run test engines bench bench-nn fmt clippy clean torch train

all: build

build:
	$(CARGO) build --release

run: build
	$(RELEASE)

# engines/pbrain-pcn: a copy of the release binary under the Gomocup brain name convention
# (managers want a real executable named pbrain-*). See engines/README.md.
engines: build
	mkdir -p engines
	cp $(RELEASE) engines/pbrain-pcn.tmp
	mv -f engines/pbrain-pcn.tmp engines/pbrain-pcn

PY_TOOLS := .tools/py
PYGOMO_VERSION := 0.1.1

# pygomo-lib (a real Gomocup controller) goes under .tools/py; without pip or a package index
# the real-client test is skipped with a notice.
$(PY_TOOLS)/.pygomo-$(PYGOMO_VERSION):
	@mkdir -p $(PY_TOOLS)
	@if python3 -m pip --version >/dev/null 2>&1 && \
	   python3 -m pip install --quiet --disable-pip-version-check --target $(PY_TOOLS) \
	     pygomo-lib==$(PYGOMO_VERSION) >$(PY_TOOLS)/pip.log 2>&1; then \
	  touch $@; \
	else \
	  echo "NOTICE: could not install pygomo-lib==$(PYGOMO_VERSION) (see $(PY_TOOLS)/pip.log); the real-client test will be skipped"; \
	fi

NODE_TOOLS := .tools/node
SABAKI_GTP_VERSION := 3.0.0

# @sabaki/gtp (Sabaki's own GTP controller code) goes under .tools/node for the GTP
# real-client test; without npm or a registry that test is skipped with a notice.
$(NODE_TOOLS)/.sabaki-gtp-$(SABAKI_GTP_VERSION):
	@mkdir -p $(NODE_TOOLS)
	@if npm install --silent --no-audit --no-fund --prefix $(NODE_TOOLS) \
	     @sabaki/gtp@$(SABAKI_GTP_VERSION) >$(NODE_TOOLS)/npm.log 2>&1; then \
	  touch $@; \
	else \
	  echo "NOTICE: could not install @sabaki/gtp@$(SABAKI_GTP_VERSION) (see $(NODE_TOOLS)/npm.log); the Sabaki real-client test will be skipped"; \
	fi

TORCH_VERSION := 2.15.0
TORCH_TOOLS := .tools/torch

# PyTorch (CPU and CUDA; the PyPI wheel brings its CUDA libraries, which it needs even on
# CPU) + NumPy under .tools/torch for training/ and its tests; measured 93 s and 5.4 GB on a
# 2-core machine. Without pip or a package index the training tests are skipped with a notice.
$(TORCH_TOOLS)/.torch-$(TORCH_VERSION):
	@mkdir -p $(TORCH_TOOLS)
	@if python3 -m pip install --quiet --disable-pip-version-check --target $(TORCH_TOOLS) \
	     torch==$(TORCH_VERSION) numpy==$(NUMPY_VERSION) >$(TORCH_TOOLS)/pip.log 2>&1; then \
	  touch $@; \
	else \
	  echo "NOTICE: could not install torch==$(TORCH_VERSION) (see $(TORCH_TOOLS)/pip.log); training tests will be skipped"; \
	fi

torch: $(TORCH_TOOLS)/.torch-$(TORCH_VERSION)

# The whole training loop (docs/training.md): self-play -> train -> export -> gate ->
# promote into weights/, resumable from runs/$(GAME). Extra options: TRAIN_ARGS="...".
GAME ?= killallgo
HOURS ?= 2
train: build torch
	nice -n 19 python3 training/loop.py --game $(GAME) --hours $(HOURS) $(TRAIN_ARGS)

test: engines torch $(PY_TOOLS)/.pygomo-$(PYGOMO_VERSION) $(NODE_TOOLS)/.sabaki-gtp-$(SABAKI_GTP_VERSION)
	sh protocol_tests/install_gnugo.sh
	$(CARGO) test --release
	@if [ -f $(NODE_TOOLS)/.sabaki-gtp-$(SABAKI_GTP_VERSION) ] && command -v node >/dev/null 2>&1; then \
	  NODE_PATH=$(NODE_TOOLS)/node_modules node protocol_tests/sabaki/sabaki_client.js $(RELEASE); \
	else \
	  echo "NOTICE: node or @sabaki/gtp missing: Sabaki real-client test (protocol_tests/sabaki) skipped"; \
	fi
	@if [ -f $(PY_TOOLS)/.pygomo-$(PYGOMO_VERSION) ]; then \
	  PYTHONPATH=$(PY_TOOLS) python3 protocol_tests/pygomo/real_client.py engines/pbrain-pcn; \
	else \
	  echo "NOTICE: pygomo-lib not installed: real-client test (protocol_tests/pygomo) skipped"; \
	fi

bench: build
	$(RELEASE) bench

ORT_VERSION := 1.31.1
NUMPY_VERSION := 2.4.6
NN_MODELS ?= ../shared/pcn/models/go_AZ ../shared/pcn/models/gomoku_AZ

# onnxruntime + numpy under .tools/py for `make bench-nn` (the reference for the CPU
# backend's speed); without pip or a package index the comparison is skipped.
$(PY_TOOLS)/.ort-$(ORT_VERSION):
	@mkdir -p $(PY_TOOLS)
	@if python3 -m pip install --quiet --disable-pip-version-check --target $(PY_TOOLS) \
	     onnxruntime==$(ORT_VERSION) numpy==$(NUMPY_VERSION) >$(PY_TOOLS)/pip-ort.log 2>&1; then \
	  touch $@; \
	else \
	  echo "NOTICE: could not install onnxruntime==$(ORT_VERSION) (see $(PY_TOOLS)/pip-ort.log); bench-nn compares nothing"; \
	fi

# pcn's CPU backend against ONNX Runtime (same model.onnx), both shapes (9x9 18 planes,
# 15x15 4 planes), 1 and 2 threads, batches 1/8/64; prints a Markdown table with ratios.
bench-nn: build $(PY_TOOLS)/.ort-$(ORT_VERSION)
	@if [ -f $(PY_TOOLS)/.ort-$(ORT_VERSION) ]; then \
	  PYTHONPATH=$(PY_TOOLS) python3 scripts/bench_nn_ort.py --table --pcn $(RELEASE) \
	    $(foreach m,$(NN_MODELS),--net $(m)) --batch 1,8,64 --threads-list 1,2 --seconds 0.3 --reps 3 --rounds 3; \
	else \
	  for m in $(NN_MODELS); do for t in 1 2; do $(RELEASE) nnbench --net $$m --threads $$t; done; done; \
	fi

fmt:
	$(CARGO) fmt --all

clippy:
	$(CARGO) clippy --all-targets -- -D warnings

clean:
	$(CARGO) clean
