#!/usr/bin/env bash
# Builds the npm package into pkg/ (or $OUT): release wasm, wasm-bindgen (web target, loaded by
# the Node and workerd entries too), wasm-opt -Oz from npm's binaryen, and the files of
# pkg-template/. Prints the .wasm size raw and gzipped.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.tools/bin:$PATH"

cargo build --lib --release --target wasm32-unknown-unknown --quiet
out="${OUT:-pkg}"
rm -rf "$out"
mkdir -p "$out/dist"
wasm-bindgen target/wasm32-unknown-unknown/release/chat_history_reducer.wasm \
  --target web --out-dir "$out/dist" --out-name chat_history_reducer
wasm="$out/dist/chat_history_reducer_bg.wasm"
node_modules/.bin/wasm-opt -Oz --converge --low-memory-unused --strip-debug --strip-producers \
  --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-mutable-globals --enable-multivalue --enable-reference-types --enable-simd \
  "$wasm" -o "$wasm"
cp -R pkg-template/. "$out/"
cp src/wasm/reader.d.ts "$out/dist/reader.d.ts"
raw=$(wc -c <"$wasm")
gz=$(gzip -9 -c "$wasm" | wc -c)
printf '[build] %s: %d bytes, %d bytes gzipped\n' "$wasm" "$raw" "$gz"
