# Set-up: `make run` builds and starts the engine; `make test` installs what the tests need
# (locally under .tools/ where possible) and runs them.
CARGO ?= cargo
RELEASE := target/release/pcn

.PHONY: all build build-cuda run test test-cuda test-cluster test-train cluster-tools engines bench bench-nn bench-openvino gauntlet device-bundle fmt clippy clean torch train train-eval fuzz soak

all: build

build:
	$(CARGO) build --release

# The release binary with the CUDA backend (runs without CUDA too; see docs/gpu.md).
build-cuda:
	$(CARGO) build --release --features cuda

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

SHARED ?= ../shared
NVRTC_TOOLS := .tools/nvrtc
NVRTC_VERSION := 13.0.88

# libnvrtc from the nvidia-cuda-nvrtc wheel goes under .tools/nvrtc: the CUDA backend's
# kernels are compiled to PTX with it (no GPU needed). Without pip or a package index the
# PTX test is skipped with a notice.
$(NVRTC_TOOLS)/.nvrtc-$(NVRTC_VERSION):
	@mkdir -p $(NVRTC_TOOLS)
	@if python3 -m pip install --quiet --disable-pip-version-check --no-deps --target $(NVRTC_TOOLS) \
	     nvidia-cuda-nvrtc==$(NVRTC_VERSION) >$(NVRTC_TOOLS)/pip.log 2>&1; then \
	  touch $@; \
	else \
	  echo "NOTICE: could not install nvidia-cuda-nvrtc==$(NVRTC_VERSION) (see $(NVRTC_TOOLS)/pip.log); the CUDA kernels' PTX test will be skipped"; \
	fi

# The CUDA backend's GPU-free checks (feature `cuda`): discovery, planning, errors, the
# kernels' PTX (required when the wheel installed) and the CLI without a GPU.
test-cuda: $(NVRTC_TOOLS)/.nvrtc-$(NVRTC_VERSION)
	@if [ -f $(NVRTC_TOOLS)/.nvrtc-$(NVRTC_VERSION) ]; then req=1; else req=0; fi; \
	PCN_REQUIRE_NVRTC=$$req PCN_CUDA_LIB_DIR=$(CURDIR)/$(NVRTC_TOOLS)/nvidia/cu13/lib \
	  $(CARGO) test --release --features cuda --lib nn::cuda
	$(CARGO) test --release --features cuda --test gpu_backend_cli
	@if [ -d $(SHARED)/pcn/models ] && [ -d $(SHARED)/problems/killallgo ] && command -v python3 >/dev/null 2>&1; then \
	  if OUT=target/device-check-dry PCN=$(RELEASE) MODELS=$(SHARED)/pcn/models PROBLEMS=$(SHARED)/problems/killallgo \
	       bash scripts/device_check.sh --dry-run >target/device-check-dry.txt 2>&1; then \
	    echo "scripts/device_check.sh --dry-run: ok ($$(tail -1 target/device-check-dry.txt))"; \
	  else cat target/device-check-dry.txt; echo "scripts/device_check.sh --dry-run FAILED"; exit 1; fi; \
	else \
	  echo "NOTICE: $(SHARED) data or python3 absent: scripts/device_check.sh --dry-run skipped"; \
	fi

RAY_TOOLS := .tools/ray
RAY_VERSION := 2.60.0

# Ray (about 260 MB) under .tools/ray for cluster/pcn-ray and its tests (docs/cluster.md);
# without pip or a package index the cluster tests are skipped with a notice.
$(RAY_TOOLS)/.ray-$(RAY_VERSION):
	@mkdir -p $(RAY_TOOLS)
	@if python3 -m pip install --quiet --disable-pip-version-check --upgrade --target $(RAY_TOOLS) \
	     ray==$(RAY_VERSION) >$(RAY_TOOLS)/pip.log 2>&1; then \
	  touch $@; \
	else \
	  echo "NOTICE: could not install ray==$(RAY_VERSION) (see $(RAY_TOOLS)/pip.log); the cluster tests will be skipped"; \
	fi

cluster-tools: $(RAY_TOOLS)/.ray-$(RAY_VERSION)

# pcn-ray against a local two-node Ray cluster on loopback (cluster/test_cluster.py: solve,
# prove, a killed pcn and a removed node, the listening sockets, nothing left running).
test-cluster: build cluster-tools
	@if [ -f $(RAY_TOOLS)/.ray-$(RAY_VERSION) ]; then \
	  PYTHONPATH=$(CURDIR)/$(RAY_TOOLS) python3 cluster/test_cluster.py $(RELEASE); \
	else \
	  echo "NOTICE: ray==$(RAY_VERSION) not installed: cluster tests (cluster/test_cluster.py) skipped"; \
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

# The eval net of the alpha-beta Gomoku player (issue 61; docs/training.md, "The eval net"):
# self-play game records of the pcn player on each board size of SIZES (GAMES plain games and
# MGAMES with --player-mistakes MISTAKES) -> a residual network (a correction to the pattern
# evaluation) -> the weight file weights/gomoku_eval_$(RULE).bin and its golden file beside
# it (the Rust test's reference values). Records and the run directory (checkpoint, log)
# stay in runs/evalnet. Then the leaf stage: the positions the player's search scores in
# LEAF_GAMES plain and LEAF_MGAMES mistake games per size (searches of LEAF_ROOT nodes),
# labelled by searches of LEAF_NODES (`pcn leaf-labels`), on which the network is trained
# LEAF_STEPS more steps at a lower rate; its best state is what is exported.
# Variables (target-specific, so GAMES does not change `make soak`'s): GAMES and MGAMES per
# size, NODES per move, MISTAKES, SIZES, STEPS, SECONDS, RULE, LEAF_*, EVAL_ARGS (more
# trainer options for the first stage, e.g. --resume).
EVAL_RUN := runs/evalnet
EVAL_PY := env PYTHONPATH=$(CURDIR)/$(TORCH_TOOLS):$(CURDIR)/training OMP_NUM_THREADS=2 python3 -m pcn_train.evalnet
train-eval: GAMES = 3000
train-eval: MGAMES = 12000
train-eval: MISTAKES = 0.2
train-eval: NODES = 16000
train-eval: SIZES = 15 20
train-eval: STEPS = 60000
train-eval: SECONDS = 420
train-eval: RULE = freestyle
train-eval: LEAF_GAMES = 3000
train-eval: LEAF_MGAMES = 3500
train-eval: LEAF_ROOT = 200000
train-eval: LEAF_NODES = 64000
train-eval: LEAF_STEPS = 6000
train-eval: build torch
	@[ -f $(TORCH_TOOLS)/.torch-$(TORCH_VERSION) ] || { echo "train-eval needs PyTorch under $(TORCH_TOOLS) (make torch)"; exit 1; }
	mkdir -p $(EVAL_RUN)
	# The player's self-play games with their root scores (docs/training.md, "The eval net"); resumable.
	for n in $(SIZES); do \
	  nice -n 19 $(RELEASE) --seed $$n selfplay --game gomoku --rule $(RULE) --size $$n \
	    --mover player --player-nodes $(NODES) --random-plies 2-8 --games $(GAMES) --parallel 1 \
	    --eval-games $(EVAL_RUN)/games-$(RULE)-$$n.jsonl || exit 1; \
	  nice -n 19 $(RELEASE) --seed 1$$n selfplay --game gomoku --rule $(RULE) --size $$n \
	    --mover player --player-nodes $(NODES) --random-plies 2-8 --player-mistakes $(MISTAKES) \
	    --games $(MGAMES) --parallel 1 --eval-games $(EVAL_RUN)/mistakes-$(RULE)-$$n.jsonl || exit 1; \
	done
	nice -n 19 $(EVAL_PY) train --data $(foreach n,$(SIZES),$(EVAL_RUN)/games-$(RULE)-$(n).jsonl $(EVAL_RUN)/mistakes-$(RULE)-$(n).jsonl) \
	  --rule $(RULE) --out $(EVAL_RUN)/train --steps $(STEPS) --seconds $(SECONDS) --threads 2 \
	  --residual --lambda 1.0 --log-every 1000 $(EVAL_ARGS)
	# Leaf data (docs/training.md, "Leaf data"); resumable.
	for n in $(SIZES); do \
	  nice -n 19 $(RELEASE) --seed 2$$n --threads 2 --eval classic leaf-labels --games $(EVAL_RUN)/games-$(RULE)-$$n.jsonl \
	    --out $(EVAL_RUN)/leaves-$(RULE)-$$n.jsonl --max-games $(LEAF_GAMES) \
	    --root-nodes $(LEAF_ROOT) --label-nodes $(LEAF_NODES) || exit 1; \
	  nice -n 19 $(RELEASE) --seed 3$$n --threads 2 --eval classic leaf-labels --games $(EVAL_RUN)/mistakes-$(RULE)-$$n.jsonl \
	    --out $(EVAL_RUN)/leaves-mistakes-$(RULE)-$$n.jsonl --max-games $(LEAF_MGAMES) \
	    --root-nodes $(LEAF_ROOT) --label-nodes $(LEAF_NODES) || exit 1; \
	done
	rm -rf $(EVAL_RUN)/leaf && mkdir -p $(EVAL_RUN)/leaf
	cp $(EVAL_RUN)/train/checkpoint.pt $(EVAL_RUN)/train/best.pt $(EVAL_RUN)/leaf/
	nice -n 19 $(EVAL_PY) train --data $(foreach n,$(SIZES),$(EVAL_RUN)/leaves-$(RULE)-$(n).jsonl $(EVAL_RUN)/leaves-mistakes-$(RULE)-$(n).jsonl) \
	  --rule $(RULE) --out $(EVAL_RUN)/leaf --steps $(LEAF_STEPS) --threads 2 \
	  --residual --lambda 1.0 --lr 5e-4 --log-every 250 --resume
	$(EVAL_PY) export $(EVAL_RUN)/leaf/best.pt --out weights/gomoku_eval_$(RULE).bin \
	  --golden weights/gomoku_eval_$(RULE).golden.txt

# The Python training tests (training/tests, unittest: the eval net's trainer and exporter);
# skipped with a notice without PyTorch under .tools/torch.
test-train:
	@if [ -f $(TORCH_TOOLS)/.torch-$(TORCH_VERSION) ]; then \
	  PYTHONPATH=$(CURDIR)/$(TORCH_TOOLS):$(CURDIR)/training OMP_NUM_THREADS=1 \
	    python3 -m unittest discover -s training/tests; \
	else \
	  echo "NOTICE: PyTorch not installed under $(TORCH_TOOLS): Python training tests (training/tests) skipped"; \
	fi

test: engines torch $(PY_TOOLS)/.pygomo-$(PYGOMO_VERSION) $(NODE_TOOLS)/.sabaki-gtp-$(SABAKI_GTP_VERSION)
	sh protocol_tests/install_gnugo.sh
	$(CARGO) test --release
	$(MAKE) --no-print-directory test-cuda
	$(MAKE) --no-print-directory test-cluster
	$(MAKE) --no-print-directory test-train
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

OPENVINO_VERSION := 2026.4.0
OV_TOOLS := .tools/openvino
OV_MODELS ?= ../shared/pcn/models/go_W-max ../shared/pcn/models/gomoku_AZ

# OpenVINO (about 250 MB under .tools/openvino; not needed by any test) against the CPU
# backend, 2 threads, batches 8 and 64, alternating rounds (docs/performance.md).
bench-openvino: build
	@test -f $(OV_TOOLS)/.ok-$(OPENVINO_VERSION) || { mkdir -p $(OV_TOOLS) && \
	  python3 -m pip install --quiet --disable-pip-version-check --target $(OV_TOOLS) \
	    openvino==$(OPENVINO_VERSION) numpy==$(NUMPY_VERSION) && touch $(OV_TOOLS)/.ok-$(OPENVINO_VERSION); }
	PYTHONPATH=$(OV_TOOLS) python3 scripts/bench_nn_openvino.py $(foreach m,$(OV_MODELS),--net $(m)) \
	  --pcn pcn=$(RELEASE) --threads 2 --batch 8,64

# What scripts/device_check.sh needs on a GPU machine without Rust, under .device/ (ignored
# by git; name it in the device call's carry list): the stripped release binary built with
# `--features cuda`, and copies of the models (weights, description, golden outputs) and of
# the Killall-Go problems from ../shared, which does not travel. See docs/performance.md.
DEVICE_BUNDLE := .device

device-bundle: build-cuda
	rm -rf $(DEVICE_BUNDLE)
	mkdir -p $(DEVICE_BUNDLE)/models $(DEVICE_BUNDLE)/problems
	strip -o $(DEVICE_BUNDLE)/pcn $(RELEASE)
	@if [ -d $(SHARED)/pcn/models ]; then \
	  for m in $(SHARED)/pcn/models/*/; do \
	    n=$$(basename $$m); mkdir -p $(DEVICE_BUNDLE)/models/$$n; \
	    cp $$m/model.safetensors $$m/model.json $(DEVICE_BUNDLE)/models/$$n/; \
	    if [ -f $$m/golden.safetensors ]; then cp $$m/golden.safetensors $(DEVICE_BUNDLE)/models/$$n/; fi; \
	  done; \
	else echo "NOTICE: $(SHARED)/pcn/models absent: the bundle has no models"; fi
	@if [ -d $(SHARED)/problems/killallgo ]; then cp -r $(SHARED)/problems/killallgo $(DEVICE_BUNDLE)/problems/; \
	else echo "NOTICE: $(SHARED)/problems/killallgo absent: the bundle has no problems"; fi
	@du -sh $(DEVICE_BUNDLE)

# Strength test against another brain (Rapfi) through c-gomoku-cli; both are built outside
# the repository and found through C_GOMOKU_CLI and RAPFI (docs/players.md, "Measuring
# strength"). Not part of `make test`. Options: make gauntlet GAUNTLET_ARGS="--league renju".
gauntlet: engines
	sh scripts/gauntlet.sh $(GAUNTLET_ARGS)

# Coverage-guided fuzzing (cargo-fuzz, libFuzzer): every target of fuzz/ for FUZZ_SECONDS
# (default 600) each, FUZZ_TIMEOUT s per input, FUZZ_RSS_MB memory; FUZZ_TARGETS picks
# some. `make test` replays the committed corpora and regressions (tests/fuzz_replay.rs).
# See docs/testing.md.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?=
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) sh scripts/fuzz.sh $(FUZZ_TARGETS)

# Soak under real managers: GAMES Gomoku games through c-gomoku-cli (pcn vs pcn and vs
# Rapfi, four leagues, 0.1 s a move, INFO max_memory 64 MB, two at a time; C_GOMOKU_CLI and
# RAPFI as for `make gauntlet`), GAMES/10 Killall-Go games through GTP, and the
# differential solver test at DIFF_POSITIONS (default 10000). See docs/testing.md.
GAMES ?= 1000
soak: engines
	GAMES=$(GAMES) sh scripts/soak.sh

fmt:
	$(CARGO) fmt --all

clippy:
	$(CARGO) clippy --all-targets -- -D warnings

clean:
	$(CARGO) clean
