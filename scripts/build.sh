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
#
# The boundary's JavaScript reaches dist/snippets/ as one module, src/wasm/generated/boundary.js
# (written by build.rs from src/wasm/js/). scripts/guard.mjs has the web glue's exports
# throw a clear error when called before init() (one check of a module variable each),
# scripts/eager.mjs has V8 compile the JavaScript that every call runs (the glue, most of
# boundary.js) when the module is imported rather than on the first call (see its header), and
# scripts/short-imports.mjs gives the .wasm's imports short names in the .wasm and the glue
# (wasm-bindgen's carry 16 hex digits each: −2.4 KB gzipped). scripts/generics.mjs declares
# the message type parameter `<M extends object = Message>` that the wasm-bindgen attributes
# of src/wasm/*.rs use (the caller's own message type in, the same type out; see its header).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.tools/bin:$PATH"

# Without the default feature console_error_panic_hook: a panic's location, not its message.
cargo build --lib --release --target wasm32-unknown-unknown --no-default-features --quiet
out="${OUT:-pkg}"
rm -rf "$out"
mkdir -p "$out/dist"
wasm-bindgen target/wasm32-unknown-unknown/release/chat_history_reducer.wasm \
  --target web --out-dir "$out/dist" --out-name chat_history_reducer
wasm="$out/dist/chat_history_reducer_bg.wasm"
node_modules/.bin/wasm-opt --merge-similar-functions -Oz --converge --one-caller-inline-max-function-size=35 \
  --low-memory-unused --strip-debug --strip-producers --strip-target-features \
  --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-mutable-globals --enable-multivalue --enable-reference-types --enable-simd \
  "$wasm" -o "$wasm"
cp -R pkg-template/. "$out/"
node scripts/guard.mjs "$out"
node scripts/eager.mjs "$out"
node scripts/short-imports.mjs "$out"
node scripts/generics.mjs "$out"
cp src/wasm/boundary.d.ts "$out/dist/boundary.d.ts"
raw=$(wc -c <"$wasm")
gz=$(gzip -9 -c "$wasm" | wc -c)
printf '[build] %s: %d bytes, %d bytes gzipped\n' "$wasm" "$raw" "$gz"
