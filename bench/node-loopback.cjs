// Preloaded into the Portkey gateway by bench/run.sh (node --require): its start script listens on
// every interface and has no host option, so this binds any listener that names only a port to
// 127.0.0.1 instead. The benchmark opens loopback ports only.
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" && (args.length === 1 || typeof args[1] !== "string")) {
    args.splice(1, 0, "127.0.0.1");
  } else if (args[0] && typeof args[0] === "object" && args[0].port !== undefined && !args[0].host) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
