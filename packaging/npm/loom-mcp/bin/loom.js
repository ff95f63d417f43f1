#!/usr/bin/env node
// Runs the loom binary of this machine's platform package (loom-mcp-<os>-<cpu>, installed by
// npm as an optional dependency), with this process's arguments, stdio and exit status. The
// binary ships inside the package: nothing is downloaded at install or at run time.
"use strict";
const { spawn } = require("child_process");
const path = require("path");

const pkg = `loom-mcp-${process.platform}-${process.arch}`;
let bin;
try {
  bin = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "bin", "loom");
} catch (e) {
  process.stderr.write(
    `loom: no prebuilt loom for ${process.platform}-${process.arch} (the package ${pkg} is not installed).\n` +
      "loom is built for Linux and macOS on x86_64 and arm64; elsewhere build it from source (cargo install --path .).\n"
  );
  process.exit(1);
}
const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => child.kill(sig));
}
child.on("error", (e) => {
  process.stderr.write(`loom: cannot run ${bin}: ${e.message}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    process.kill(process.pid, signal);
  } else {
    process.exit(code === null ? 1 : code);
  }
});
