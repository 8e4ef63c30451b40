# Set-up: `make run` builds and starts the engine; `make test` installs what the tests need
# (locally under .tools/ where possible) and runs them.
CARGO ?= cargo
RELEASE := target/release/pcn

.PHONY: all build run test engines bench fmt clippy clean

all: build

build:
	$(CARGO) build --release

run: build
	$(RELEASE)

engines: build
	mkdir -p engines
	cp $(RELEASE) engines/pbrain-pcn

test: engines
	$(CARGO) test --release

bench: build
	$(RELEASE) bench

fmt:
	$(CARGO) fmt --all

clippy:
	$(CARGO) clippy --all-targets -- -D warnings

clean:
	$(CARGO) clean
