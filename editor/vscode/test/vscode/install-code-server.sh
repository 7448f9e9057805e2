#!/usr/bin/env bash
# Installs code-server (a real VS Code in the browser) from the npm registry into $1, with no
# network beyond the package registries: Debian's ripgrep stands in for the download that
# @vscode/ripgrep's postinstall would make from GitHub, placed in the cache it checks first.
# Needs Node.js 20, Debian's libkrb5-dev (a native module builds against it) and ripgrep.
set -euo pipefail
PREFIX=${1:?usage: install-code-server.sh PREFIX}
VERSION=4.100.3   # the newest release for Node.js 20
if [ -x "$PREFIX/node_modules/.bin/code-server" ]; then
  exit 0
fi
RG=$(command -v rg) || { echo "ripgrep is needed (Debian: apt-get install ripgrep)" >&2; exit 1; }
mkdir -p "$PREFIX"
# Without the install scripts first, to read which @vscode/ripgrep VS Code pins.
npm install --no-audit --no-fund --loglevel=error --ignore-scripts --prefix "$PREFIX" "code-server@$VERSION"
CS="$PREFIX/node_modules/code-server"
RG_PACKAGE=$(node -e 'const s=require(process.argv[1]);console.log(s.packages["node_modules/@vscode/ripgrep"].version)' "$CS/lib/vscode/npm-shrinkwrap.json")
RG_RELEASE=$(node -e 'const s=require("fs").readFileSync(process.argv[1],"utf8");console.log(/const VERSION = .(v[^"\x27]+)/.exec(s)[1])' \
  "$(npm pack --silent --pack-destination "$PREFIX" "@vscode/ripgrep@$RG_PACKAGE" >/dev/null && tar -xzf "$PREFIX/vscode-ripgrep-$RG_PACKAGE.tgz" -C "$PREFIX" package/lib/postinstall.js && echo "$PREFIX/package/lib/postinstall.js")")
case "$(uname -m)" in
  x86_64) TARGET=x86_64-unknown-linux-musl ;;
  aarch64) TARGET=aarch64-unknown-linux-musl ;;
  *) echo "no ripgrep target for $(uname -m)" >&2; exit 1 ;;
esac
CACHE="$(node -p 'require("os").tmpdir()')/vscode-ripgrep-cache-$RG_PACKAGE"
mkdir -p "$CACHE"
STAGE=$(mktemp -d)
cp "$RG" "$STAGE/rg"
tar -czf "$CACHE/ripgrep-$RG_RELEASE-$TARGET.tar.gz" -C "$STAGE" rg
rm -rf "$STAGE" "$PREFIX/package" "$PREFIX/vscode-ripgrep-$RG_PACKAGE.tgz"
# Now the skipped install scripts: argon2 (built here: its prebuilt binary is a GitHub download)
# and code-server's postinstall, which installs VS Code's dependencies (native modules built here).
(cd "$PREFIX" && npm_config_unsafe_perm=true npm_config_yes=true npm rebuild --foreground-scripts argon2 code-server >"$PREFIX/postinstall.log" 2>&1) \
  || { tail -30 "$PREFIX/postinstall.log" >&2; exit 1; }
"$PREFIX/node_modules/.bin/code-server" --version
