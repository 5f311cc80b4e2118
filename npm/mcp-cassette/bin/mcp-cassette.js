#!/usr/bin/env node
// `mcp-cassette` from npm: runs the native binary with the same arguments, standard streams,
// exit status and signals, so `npx mcp-cassette …` behaves like the binary itself
// (docs/npm.md).

import { spawn } from "node:child_process";
import { constants } from "node:os";

import { BinaryNotFoundError, binaryPath } from "../lib/binary.js";

// Exit status when the binary cannot be started at all: the CLI's "could not run" code.
const CANNOT_RUN = 2;

let file;
try {
  file = binaryPath();
} catch (err) {
  if (!(err instanceof BinaryNotFoundError)) throw err;
  process.stderr.write(`${err.message}\n`);
  process.exit(CANNOT_RUN);
}

// The child shares our stdin, stdout and stderr file descriptors: replay and record speak the
// protocol on them, so no byte passes through JavaScript.
const child = spawn(file, process.argv.slice(2), { stdio: "inherit", windowsHide: true });

// SIGTERM and SIGHUP are usually sent to this process alone (a test runner stopping its child,
// a closed terminal), so they are passed on. SIGINT from a terminal already reaches the binary,
// which is in the same process group; passing it on as well would be a second interrupt, which
// `record` takes as "stop harder". So SIGINT is only kept from killing this process before the
// binary has exited and its status can be handed back.
const forwarded = process.platform === "win32" ? [] : ["SIGTERM", "SIGHUP"];
const handlers = new Map();
for (const signal of forwarded) {
  const handler = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  handlers.set(signal, handler);
  process.on(signal, handler);
}
const ignoreInterrupt = () => {};
process.on("SIGINT", ignoreInterrupt);

child.on("error", (err) => {
  process.stderr.write(`mcp-cassette: failed to start ${file}: ${err.message}\n`);
  process.exit(CANNOT_RUN);
});

child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so whoever started us sees what the binary saw.
    for (const [name, handler] of handlers) process.off(name, handler);
    process.off("SIGINT", ignoreInterrupt);
    process.kill(process.pid, signal);
    // Still here (a signal Node will not die of): the shell's convention.
    process.exit(128 + (constants.signals[signal] ?? 0));
  }
  process.exit(code ?? CANNOT_RUN);
});
