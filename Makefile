# Two commands on a fresh machine: `make demo` and `make test`. Each does its own set-up
# (scripts/setup.sh is idempotent and quick when everything is there).
SHELL := /bin/bash
export PATH := $(CURDIR)/.tools/bin:$(PATH)
export CHROMEDRIVER ?= /usr/bin/chromedriver

.PHONY: demo test setup build check native unit wasm-node wasm-browser package e2e serve bench accuracy clean

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
check native unit wasm-node wasm-browser package e2e: setup
	bash scripts/test.sh $@

# The demo page on http://127.0.0.1:8080 (PORT=… to change): a static server, nothing else.
serve: build
	node www/serve.mjs --port $${PORT:-8080} --pkg pkg

# Speed against the JavaScript peers, in one process (BENCH_QUICK=1 for a short run); what a
# long agent session costs with prompt caching; what its last prompt still holds, by strategy.
bench: build
	node bench/run.mjs
	node bench/stateless.mjs
	node bench/cost.mjs
	node bench/retention.mjs

# The token estimator's profiles against their tokenizers (OpenAI's, Gemma's, Llama 3's) on a local corpus.
accuracy: build
	node bench/accuracy/measure.mjs

clean:
	rm -rf target pkg build
