#!/usr/bin/env bash
# Builds the npm package into pkg/ (or $OUT): release wasm, wasm-bindgen (web target, loaded by
# the Node and workerd entries too), wasm-opt -Oz from npm's binaryen, and the files of
# pkg-template/. Prints the .wasm size raw and gzipped.
#
# wasm-opt inlines a function called from one place only up to 35 bytes
# (--one-caller-inline-max-function-size; by default at any size): V8 compiles wasm lazily,
# a function on its first call, so code that a call skips (errors, the decisive estimate of
# long histories, rare options) stays uncompiled instead of making its caller bigger.
# Measured: initSync + first call −0.5 ms (6.7 → 6.2, medians of 15 fresh processes each),
# gzipped −2 KB, no change in the throughput benchmarks. (35 bytes rather than 50: −269 B
# gzipped, start-up the same: 6.1 vs 6.0–6.6 ms, medians of 7 fresh processes; the sizes
# gzipped go down from 0 to 35, then up again.) The target_features section is
# linker metadata (the features are enabled below): stripped, −121 bytes gzipped.
# --merge-similar-functions (before -Oz; not part of it) folds functions that differ only in
# constants into one: −104 bytes gzipped, no change measured by bench/ab.mjs (0.988).
# Then scripts/order-functions.mjs chooses the functions' order for gzip (which finds repeats
# within 32 KB only: a function placed after code it shares byte sequences with costs less)
# and a second wasm-opt puts them in it, with -Oz's levels so that it writes the code as the
# first did: −987 bytes gzipped against the names' order (which was −353 against LLVM's),
# the code itself the same.
#
# The boundary's JavaScript reaches dist/snippets/ as one module, src/wasm/generated/boundary.js,
# written by build.rs from src/wasm/js/ (the modules marked `// @eager` in the form V8 compiles
# at import). scripts/postbuild.mjs then changes, on the TypeScript compiler's syntax trees and
# by the kind of each node (no list of names), what wasm-bindgen writes and none of its
# attributes reaches: the web glue's exports throw a clear error when called before init(),
# its functions compile at import, the .wasm's imports get short names (in the .wasm and the
# glue), and the .d.ts declares the message type parameter `<M extends object = Message>`
# that the attributes of src/wasm/*.rs use. It fails the build on a shape it does not expect.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.tools/bin:$PATH"

# Without the default feature console_error_panic_hook: a panic's location, not its message.
cargo build --lib --release --target wasm32-unknown-unknown --no-default-features --quiet
out="${OUT:-pkg}"
# NAMES=1: the functions keep their names (for scripts/wasm-sizes.mjs and CPU profiles) and
# LLVM's order; the code is the same.
if [ -n "${NAMES:-}" ]; then keep=(--keep-debug) debug=-g; else keep=() debug=--strip-debug; fi
rm -rf "$out"
mkdir -p "$out/dist"
wasm-bindgen target/wasm32-unknown-unknown/release/chat_history_reducer.wasm "${keep[@]}" \
  --target web --out-dir "$out/dist" --out-name chat_history_reducer
wasm="$out/dist/chat_history_reducer_bg.wasm"
features="--enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext
  --enable-mutable-globals --enable-multivalue --enable-reference-types --enable-simd"
# (`$features` unquoted: a word for each flag.)
node_modules/.bin/wasm-opt --merge-similar-functions -Oz --converge --one-caller-inline-max-function-size=35 \
  --low-memory-unused $debug --strip-producers --strip-target-features $features \
  "$wasm" -o "$wasm"
if [ -z "${NAMES:-}" ]; then
  node scripts/order-functions.mjs "$wasm"
  node_modules/.bin/wasm-opt --reorder-functions-by-name --strip-debug $features \
    --optimize-level=2 --shrink-level=2 --generate-stack-ir --optimize-stack-ir "$wasm" -o "$wasm"
fi
cp -R pkg-template/. "$out/"
node scripts/postbuild.mjs "$out"
cp src/wasm/boundary.d.ts "$out/dist/boundary.d.ts"
raw=$(wc -c <"$wasm")
gz=$(gzip -9 -c "$wasm" | wc -c)
printf '[build] %s: %d bytes, %d bytes gzipped\n' "$wasm" "$raw" "$gz"
