#!/usr/bin/env bash
# End-to-end tests of the built package, as its users meet it:
#   page    the demo page (www/) in headless Chromium, driven by playwright-core: reducing
#           (page.test.mjs), and its ChatHistory kept in localStorage across a reload and
#           edited by clicking rewind / remove (page-history.test.mjs)
#   worker  examples/worker under workerd: a Durable Object per conversation, a stub model
#   agent   examples/cloudflare-agent under `wrangler dev`: an AIChatAgent (Cloudflare
#           Agents) with the AI SDK middleware, offloads in its Durable Object storage, a
#           stub model; driven over its WebSocket
#   types   tsc --strict on js-tests/types/usage.ts and misuse.ts (bundler and nodenext)
#   vite    a tiny app importing the package, built by Vite, run in Chromium
#
#   bash scripts/e2e.sh [all|page|worker|agent|types|vite]
#
# The package under test: CHR_TARBALL (a packed .tgz) or CHR_PKG (a package directory,
# default pkg/, built by scripts/build.sh when missing). Either way it is packed and
# installed into a scratch project (build/e2e/project) and the tests run against that
# installed copy.
#
# Needs only what is on the machine: node_modules (playwright-core, workerd, typescript,
# vite), examples/cloudflare-agent/node_modules (scripts/setup.sh npm) and /usr/bin/chromium.
# Downloads nothing; talks to 127.0.0.1 only.
set -euo pipefail
# paths in CHR_PKG / CHR_TARBALL are relative to where the script was called from
abs() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
[ -n "${CHR_PKG:-}" ] && CHR_PKG="$(abs "$CHR_PKG")"
[ -n "${CHR_TARBALL:-}" ] && CHR_TARBALL="$(abs "$CHR_TARBALL")"
cd "$(dirname "$0")/.."
exec </dev/null
export CI="${CI:-true}"
export npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

what="${1:-all}"
case "$what" in
  all | page | worker | agent | types | vite) ;;
  *) echo "usage: $0 [all|page|worker|agent|types|vite]" >&2; exit 2 ;;
esac

root="$PWD"
work="$root/build/e2e"
logs="$work/logs"
mkdir -p "$logs"

for tool in node_modules/.bin/tsc node_modules/.bin/vite node_modules/.bin/workerd node_modules/playwright-core/package.json; do
  [ -e "$tool" ] || { echo "FAIL: $tool is missing (the dev dependencies: npm ci)" >&2; exit 1; }
done
if [ "$what" = all ] || [ "$what" = agent ]; then
  [ -x examples/cloudflare-agent/node_modules/.bin/wrangler ] || { echo "FAIL: examples/cloudflare-agent/node_modules is missing (bash scripts/setup.sh npm)" >&2; exit 1; }
fi
if [ "$what" != "worker" ] && [ "$what" != "agent" ] && [ "$what" != "types" ]; then
  [ -x "${CHROMIUM:-/usr/bin/chromium}" ] || { echo "FAIL: no Chromium at ${CHROMIUM:-/usr/bin/chromium} (apt-get install chromium)" >&2; exit 1; }
fi

# ---- the package under test, installed in a scratch project ------------------------------
if [ -n "${CHR_TARBALL:-}" ]; then
  tarball="$CHR_TARBALL"
  [ -f "$tarball" ] || { echo "FAIL: CHR_TARBALL=$CHR_TARBALL is not a file" >&2; exit 1; }
else
  pkg="${CHR_PKG:-$root/pkg}"
  if [ -z "${CHR_PKG:-}" ] && [ ! -f "$pkg/package.json" ]; then
    echo "=== no pkg/: building it (scripts/build.sh)"
    bash scripts/build.sh
  fi
  [ -f "$pkg/package.json" ] || { echo "FAIL: CHR_PKG=$pkg has no package.json" >&2; exit 1; }
  rm -rf "$work/tarball" && mkdir -p "$work/tarball"
  (cd "$pkg" && npm pack --silent --pack-destination "$work/tarball" >/dev/null)
  tarball="$(ls "$work"/tarball/*.tgz)"
fi
project="$work/project"
rm -rf "$project" && mkdir -p "$project"
cat >"$project/package.json" <<'JSON'
{ "name": "chr-e2e", "private": true, "type": "module" }
JSON
echo "=== installing $(basename "$tarball") into $project"
(cd "$project" && npm install --offline --no-audit --no-fund --loglevel=error "$tarball" >/dev/null)
export CHR_PKG="$project/node_modules/chat-history-reducer"
export CHR_TARBALL="$tarball" # the agent layer installs it into its copy of the example
[ -f "$CHR_PKG/dist/chat_history_reducer_bg.wasm" ] || { echo "FAIL: the installed package has no .wasm" >&2; exit 1; }

# ---- the tests ---------------------------------------------------------------------------
passed=0
failed=0
summary=()

# Node 20 has WebSocket (the agent layer's client) behind a flag; 22 and later by default.
node_flags=()
node -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)' || node_flags+=(--experimental-websocket)

layer() {
  local name=$1 log="$logs/$1.log" n f rc=0
  shift
  printf '\n=== %s (%s)\n' "$name" "$*"
  timeout 170 node "${node_flags[@]}" --test --test-reporter=spec "$@" >"$log" 2>&1 || rc=$?
  cat "$log"
  n=$(grep -E '^ℹ pass ' "$log" | awk '{print $3}' | tail -1)
  f=$(grep -E '^ℹ fail ' "$log" | awk '{print $3}' | tail -1)
  n=${n:-0}
  f=${f:-0}
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi # crashed or timed out
  if [ "$n" -eq 0 ] && [ "$f" -eq 0 ]; then f=1; echo "FAIL: $name ran no tests"; fi
  passed=$((passed + n))
  failed=$((failed + f))
  summary+=("$(printf '%-7s %3d passed, %d failed' "$name" "$n" "$f")")
}

started=$SECONDS
case "$what" in
  all)
    layer page js-tests/e2e/page.test.mjs js-tests/e2e/page-history.test.mjs
    layer worker js-tests/e2e/worker.test.mjs
    layer agent js-tests/e2e/agent.test.mjs
    layer types js-tests/types/types.test.mjs
    layer vite js-tests/e2e/vite.test.mjs
    ;;
  page) layer page js-tests/e2e/page.test.mjs js-tests/e2e/page-history.test.mjs ;;
  worker) layer worker js-tests/e2e/worker.test.mjs ;;
  agent) layer agent js-tests/e2e/agent.test.mjs ;;
  types) layer types js-tests/types/types.test.mjs ;;
  vite) layer vite js-tests/e2e/vite.test.mjs ;;
esac

printf '\n=== e2e summary (package: %s, %ds)\n' "$(basename "$tarball")" $((SECONDS - started))
printf '%s\n' "${summary[@]}"
case "$what" in all | page) for shot in demo demo-editing; do [ -f "build/screenshots/$shot.png" ] && echo "screenshot: $root/build/screenshots/$shot.png"; done ;; esac
printf 'e2e: %d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
