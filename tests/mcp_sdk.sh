#!/usr/bin/env bash
# Make sure an npm kit for the `layover mcp` client tests is installed, in a
# cache dir outside the repo that the throwaway test uid can read. Prints the
# dir on success; else prints why on stderr and exits 1 (the test then fails
# with that reason, unless LAYOVER_ALLOW_SKIP=1). npm runs only when the kit
# is missing.
#   tests/mcp_sdk.sh [sdk]      # the official TypeScript SDK (node >= 18)
#   tests/mcp_sdk.sh inspector  # the MCP Inspector, with a node 22 from npm (it needs >= 22.19)
#   tests/mcp_sdk.sh conformance  # the conformance suite and supergateway (stdio -> HTTP), node 22
set -u
KIT=${1:-sdk}
case "$KIT" in
    sdk) PKGS=("@modelcontextprotocol/sdk@1.32.2"); CHECK=node_modules/@modelcontextprotocol/sdk/package.json
         NAME=mcp-sdk-1.32.2;;
    inspector) PKGS=("@modelcontextprotocol/inspector@2.12.0" "node@22.23.3")
               CHECK=node_modules/@modelcontextprotocol/inspector/package.json; NAME=mcp-inspector-2.12.0;;
    conformance) PKGS=("@modelcontextprotocol/conformance@0.1.16" "supergateway@4.0.0" "node@22.23.3")
                 CHECK=node_modules/@modelcontextprotocol/conformance/package.json; NAME=mcp-conformance-0.1.16;;
    *) echo "usage: tests/mcp_sdk.sh [sdk|inspector|conformance]" >&2; exit 2;;
esac
if [ "$(id -u)" -eq 0 ]; then
    DIR=/var/cache/layover-test/$NAME
else
    DIR=${XDG_CACHE_HOME:-$HOME/.cache}/layover/$NAME
fi
if [ -f "$DIR/$CHECK" ] && { [ "$KIT" = sdk ] || [ -x "$DIR/node_modules/.bin/node" ]; }; then
    echo "$DIR"
    exit 0
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "node and npm are needed for the MCP $KIT test (apt-get install nodejs npm)" >&2
    exit 1
fi
mkdir -p "$DIR" || exit 1
echo "installing ${PKGS[*]} into $DIR (once; cached)" >&2
if ! npm install --no-audit --no-fund --loglevel=error --prefix "$DIR" "${PKGS[@]}" >&2; then
    echo "npm could not install ${PKGS[*]} into $DIR" >&2
    exit 1
fi
chmod -R a+rX "$DIR"
echo "$DIR"
