#!/usr/bin/env bash
# Make sure the official MCP TypeScript SDK (@modelcontextprotocol/sdk) is
# installed for the `layover mcp` client test, in a cache dir outside the
# repo that the throwaway test uid can read. Prints the dir on success; else
# prints why on stderr and exits 1 (the test then fails with that reason,
# unless LAYOVER_ALLOW_SKIP=1). npm runs only when the SDK is missing.
#   tests/mcp_sdk.sh            # used by tests/run_all.sh and tests/dev_pytest.sh
set -u
VERSION=1.32.2
if [ "$(id -u)" -eq 0 ]; then
    DIR=${LAYOVER_MCP_SDK_CACHE:-/var/cache/layover-test/mcp-sdk-$VERSION}
else
    DIR=${LAYOVER_MCP_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/layover/mcp-sdk-$VERSION}
fi
if [ -f "$DIR/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
    echo "$DIR"
    exit 0
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "node and npm are needed for the MCP SDK client test (apt-get install nodejs npm)" >&2
    exit 1
fi
mkdir -p "$DIR" || exit 1
echo "installing @modelcontextprotocol/sdk@$VERSION into $DIR (once; cached)" >&2
if ! npm install --no-audit --no-fund --loglevel=error --prefix "$DIR" "@modelcontextprotocol/sdk@$VERSION" >&2; then
    echo "npm could not install @modelcontextprotocol/sdk@$VERSION into $DIR" >&2
    exit 1
fi
chmod -R a+rX "$DIR"
echo "$DIR"
