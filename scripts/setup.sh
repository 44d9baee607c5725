#!/usr/bin/env bash
# Installs everything the build and the tests need, idempotently: the wasm32 target, the
# wasm-bindgen CLI of the exact version in Cargo.lock and wasm-pack (the wasm tests' runner;
# both built from crates.io into .tools/), Debian's chromium + chromium-driver for the
# browser tests, and the npm dev dependencies (with examples/cloudflare-agent's own).
# Nothing is downloaded from outside the package registries.
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"   # all | rust | wasm-pack | browser | npm
wasm_pack_version=0.15.1

log() { printf '[setup] %s\n' "$*"; }

rust() {
  if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    log "rustup target add wasm32-unknown-unknown"
    rustup target add wasm32-unknown-unknown
  fi
  [ -f Cargo.lock ] || cargo generate-lockfile
  local want have
  want=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/"/,"",$3); print $3; exit}' Cargo.lock)
  have=$(.tools/bin/wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
  if [ "$want" != "$have" ]; then
    log "cargo install wasm-bindgen-cli $want into .tools (about 2 minutes)"
    # Not --locked: the CLI's own lockfile pins a crate the registry here does not serve.
    cargo install wasm-bindgen-cli --version "$want" --root .tools --force
  fi
}

# The wasm tests' runner. With `--mode no-install` it takes the wasm-bindgen above from PATH
# and runs offline. From crates.io: the npm package's postinstall downloads from GitHub.
wasm_pack() {
  local have
  have=$(.tools/bin/wasm-pack --version 2>/dev/null | awk '{print $2}' || true)
  if [ "$have" != "$wasm_pack_version" ]; then
    log "cargo install wasm-pack $wasm_pack_version into .tools (about 2 minutes)"
    cargo install wasm-pack --version "$wasm_pack_version" --locked --root .tools --force
  fi
}

browser() {
  if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    log "apt-get install chromium chromium-driver"
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium chromium-driver >/dev/null
  fi
}

npm_deps() {
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    # `npm install` with the committed lock, not `npm ci`: the registry here does not serve
    # the other platforms' optional packages (rollup, workerd), so the lock cannot list
    # them and `npm ci` refuses it as out of sync.
    log "npm install (from package-lock.json)"
    npm install --no-audit --no-fund --loglevel=error
  fi
  # The Cloudflare agent example's own dependencies (agents, @cloudflare/ai-chat, ai,
  # wrangler with its workerd): the e2e layer runs it under `wrangler dev` from a copy.
  local ex=examples/cloudflare-agent
  if [ ! -d "$ex/node_modules" ] || [ "$ex/package-lock.json" -nt "$ex/node_modules/.package-lock.json" ]; then
    log "npm install in $ex (from its package-lock.json)"
    (cd "$ex" && npm install --no-audit --no-fund --loglevel=error)
  fi
}

case "$what" in
  rust) rust ;;
  wasm-pack) wasm_pack ;;
  browser) browser ;;
  npm) npm_deps ;;
  all) rust; wasm_pack; npm_deps; browser ;;
  *) echo "usage: $0 [all|rust|wasm-pack|browser|npm]" >&2; exit 2 ;;
esac
