# Two commands on a fresh machine: `make demo` and `make test`. Each does its own set-up
# (scripts/setup.sh is idempotent and quick when everything is there).
SHELL := /bin/bash
export PATH := $(CURDIR)/.tools/bin:$(PATH)
export CHROMEDRIVER ?= /usr/bin/chromedriver

.PHONY: demo test setup build check native wasm-node wasm-browser package clean

demo: build
	node examples/demo.mjs

test: setup
	bash scripts/test.sh

setup:
	bash scripts/setup.sh all

build:
	bash scripts/setup.sh rust
	bash scripts/setup.sh npm
	bash scripts/build.sh

# Single layers of the suite, for working on one of them.
check native wasm-node wasm-browser package: setup
	bash scripts/test.sh $@

clean:
	rm -rf target pkg build
