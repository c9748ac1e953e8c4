// Preloaded (node -r) into supergateway by the MCP conformance test: every
// server that listens on a bare port listens on 127.0.0.1 only, not on all
// interfaces (express's default).
"use strict";
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
    if (typeof args[0] === "number" && typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
    return listen.apply(this, args);
};
