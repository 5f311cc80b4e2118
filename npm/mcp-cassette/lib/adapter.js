// The one implementation behind `mcp-cassette/vitest` and `mcp-cassette/jest` (docs/adapters.md).
// Each entry point hands in its framework's hooks; nothing here imports a test framework.
//
// An HTTP cassette is served by the native binary (`replay --listen 127.0.0.1:0 --control`) for
// the length of a describe block. After every test the adapter drains the misses the binary
// logged over the miss channel (a per-run token in $MCP_CASSETTE_CONTROL_TOKEN) and fails that
// test with them. A stdio cassette only gets a command line: the client under test spawns it.

import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, openSync, readSync } from "node:fs";
import { resolve } from "node:path";

import { binaryPath } from "./binary.js";
import { missesToError, unusedToError } from "./errors.js";

export {
  CassetteMismatchError,
  CassetteMissError,
  CassetteUnusedError,
  ReplayError,
  isMismatch,
  missesToError,
  unusedToError,
} from "./errors.js";

const TOKEN_ENV = "MCP_CASSETTE_CONTROL_TOKEN";
const DRAIN_PATH = ".mcp-cassette/misses/drain";
const UNUSED_PATH = ".mcp-cassette/unused";
/** How long the binary may take to print its URL before the block fails. */
const START_TIMEOUT_MS = 10_000;
/** How long the binary may take to exit on SIGTERM before it is killed. */
const STOP_TIMEOUT_MS = 5_000;
/** A header line longer than this is not one (the header is a few hundred bytes). */
const HEADER_LIMIT = 1024 * 1024;
/** Stderr kept for an error message, from the end. */
const STDERR_KEPT = 16 * 1024;
const URL_LINE = /^mcp-cassette replay: serving .* server at (https?:\/\/\S+)\s*$/;

/** The first line of a cassette, parsed: its header. Throws naming the file. */
function readHeader(path, shown) {
  let fd;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    throw new Error(`mcp-cassette: cannot open the cassette ${shown} (${path}): ${err.message}`);
  }
  let text = "";
  try {
    const chunk = Buffer.alloc(64 * 1024);
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      text += chunk.toString("utf8", 0, n);
      if (text.includes("\n") || text.length > HEADER_LIMIT) break;
    }
  } finally {
    closeSync(fd);
  }
  const line = text.split("\n", 1)[0].replace(/^\uFEFF/, "").trim();
  let header;
  try {
    header = JSON.parse(line);
  } catch {
    header = undefined;
  }
  if (header === null || typeof header !== "object" || header.type !== "header") {
    throw new Error(
      `mcp-cassette: ${shown} is not a cassette: its first line is not a cassette header ` +
        `({"type":"header",…})`,
    );
  }
  return header;
}

/** The shape rules of a volatile declaration, checked at collection (docs/replay.md). */
function checkVolatile(decl) {
  const bad = (why) =>
    new Error(
      `mcp-cassette: ${why}: ${JSON.stringify(decl)}. A volatile declaration is a JSON Pointer ` +
        `into the request params (/arguments/requestedAt), optionally scoped to one method ` +
        `(tools/call:/arguments/requestedAt)`,
    );
  if (typeof decl !== "string") throw bad("a volatile declaration must be a string");
  if (decl === "") throw bad("the declaration names no field");
  if (decl.startsWith("/")) return;
  const colon = decl.indexOf(":");
  if (colon < 0) throw bad("neither a JSON Pointer nor a method-scoped one");
  if (colon === 0) throw bad("the method scope is empty");
  const pointer = decl.slice(colon + 1);
  if (pointer === "") throw bad("the declaration names no field");
  if (!pointer.startsWith("/")) throw bad("the pointer after the method does not start with \"/\"");
}

function checkOptions(options) {
  if (options === null || typeof options !== "object") {
    throw new TypeError("mcp-cassette: useCassette's options must be an object");
  }
  const onMiss = options.onMiss ?? "error";
  if (onMiss !== "error" && onMiss !== "warn") {
    throw new TypeError(`mcp-cassette: unknown onMiss ${JSON.stringify(onMiss)} (expected "error" or "warn")`);
  }
  const timing = options.timing ?? "none";
  if (timing !== "none" && timing !== "recorded") {
    throw new TypeError(`mcp-cassette: unknown timing ${JSON.stringify(timing)} (expected "none" or "recorded")`);
  }
  const volatile = options.volatile ?? [];
  if (!Array.isArray(volatile)) {
    throw new TypeError("mcp-cassette: volatile must be a list of declarations");
  }
  volatile.forEach(checkVolatile);
  const listen = options.listen ?? "127.0.0.1:0";
  if (typeof listen !== "string" || listen === "") {
    throw new TypeError("mcp-cassette: listen must be a host:port string");
  }
  const redactConfig = options.redactConfig === undefined ? undefined : resolve(String(options.redactConfig));
  const failOnUnused = options.failOnUnused ?? false;
  if (typeof failOnUnused !== "boolean") {
    throw new TypeError("mcp-cassette: failOnUnused must be true or false");
  }
  return { onMiss, timing, volatile: [...volatile], listen, redactConfig, failOnUnused };
}

/** The flags both transports pass on: volatile declarations, then the redaction config. */
function sharedFlags(opts) {
  const flags = opts.volatile.flatMap((decl) => ["--volatile", decl]);
  if (opts.redactConfig !== undefined) flags.push("--redact-config", opts.redactConfig);
  return flags;
}

/** The end of what a process wrote on stderr, indented under a message. */
function quoted(stderr) {
  const text = stderr.trimEnd();
  return text === "" ? " (it wrote nothing on stderr)" : `; its stderr:\n${text}`;
}

/** `replay --listen … --control` for one describe block. */
class Server {
  constructor(file, shown, opts) {
    this.file = file;
    this.shown = shown;
    this.opts = opts;
    this.child = undefined;
    this.url = undefined;
    this.stderr = "";
    this.exit = undefined;
    this.token = randomBytes(24).toString("hex");
    this.drained = 0;
    this.stopping = false;
  }

  start() {
    const args = ["replay", this.file, "--listen", this.opts.listen, "--control"];
    if (this.opts.timing !== "none") args.push("--timing", this.opts.timing);
    args.push(...sharedFlags(this.opts));
    const bin = binaryPath();
    return new Promise((resolveStart, rejectStart) => {
      let settled = false;
      const settle = (fn, value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        fn(value);
      };
      // stdin is a pipe held open and never written: under --control the replay stops when it
      // closes, which happens when this process ends however it ends, so a replay never
      // outlives its test run (docs/adapters.md).
      const child = spawn(bin, args, {
        env: { ...process.env, [TOKEN_ENV]: this.token },
        stdio: ["pipe", "ignore", "pipe"],
        windowsHide: true,
      });
      this.child = child;
      child.stdin.on("error", () => {});
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        settle(
          rejectStart,
          new Error(
            `mcp-cassette: the replay server for ${this.shown} printed no URL within ` +
              `${START_TIMEOUT_MS} ms${quoted(this.stderr)}`,
          ),
        );
      }, START_TIMEOUT_MS);
      let pending = "";
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", (text) => {
        this.stderr = (this.stderr + text).slice(-STDERR_KEPT);
        if (this.url !== undefined) return;
        pending += text;
        let newline;
        while ((newline = pending.indexOf("\n")) >= 0) {
          const line = pending.slice(0, newline);
          pending = pending.slice(newline + 1);
          const found = URL_LINE.exec(line);
          if (found) {
            this.url = found[1];
            settle(resolveStart, this.url);
            return;
          }
        }
      });
      child.stderr.on("error", () => {});
      child.on("error", (err) => {
        this.exit = { code: null, signal: null, error: err };
        settle(rejectStart, new Error(`mcp-cassette: failed to start ${bin} for ${this.shown}: ${err.message}`));
      });
      child.on("exit", (code, signal) => {
        this.exit = { code, signal };
        settle(
          rejectStart,
          new Error(
            `mcp-cassette: the replay server for ${this.shown} exited before it was ready ` +
              `(${signal ? `signal ${signal}` : `exit code ${code}`})${quoted(this.stderr)}`,
          ),
        );
      });
    });
  }

  /** Throws when the server is gone: its misses are unknowable and every request failed. */
  checkAlive() {
    if (this.exit === undefined || this.stopping) return;
    const how = this.exit.signal ? `signal ${this.exit.signal}` : `exit code ${this.exit.code}`;
    throw new Error(`mcp-cassette: the replay server for ${this.shown} exited during the test (${how})${quoted(this.stderr)}`);
  }

  /** The misses logged since the last drain. */
  async drain() {
    this.checkAlive();
    let answer;
    try {
      const res = await fetch(new URL(DRAIN_PATH, this.url), {
        method: "POST",
        headers: { authorization: `Bearer ${this.token}` },
      });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      answer = await res.json();
    } catch (err) {
      this.checkAlive();
      throw new Error(`mcp-cassette: failed to drain the misses of ${this.shown}: ${err.message}`);
    }
    const misses = Array.isArray(answer.misses) ? answer.misses : [];
    this.drained += misses.length;
    return misses;
  }

  /** The recordings no test of the block has used so far. */
  async unused() {
    this.checkAlive();
    try {
      const res = await fetch(new URL(UNUSED_PATH, this.url), {
        headers: { authorization: `Bearer ${this.token}` },
      });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const answer = await res.json();
      return Array.isArray(answer.unused) ? answer.unused : [];
    } catch (err) {
      this.checkAlive();
      throw new Error(`mcp-cassette: failed to read the unused recordings of ${this.shown}: ${err.message}`);
    }
  }

  async stop() {
    const child = this.child;
    if (child === undefined || this.exit !== undefined) return;
    this.stopping = true;
    await new Promise((done) => {
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
      child.once("exit", () => {
        clearTimeout(timer);
        done();
      });
      child.kill("SIGTERM");
    });
  }
}

/**
 * The hook table of a framework that, like vitest and jest, names the running test in its
 * `expect`'s state and nothing at collection.
 */
export function hooksOf({ beforeAll, beforeEach, afterEach, afterAll, expect }) {
  return {
    beforeAll,
    beforeEach,
    afterEach,
    afterAll,
    inTest: () => expect.getState().currentTestName !== undefined,
  };
}

/**
 * `useCassette(file, options)` for a framework whose hooks are `hooks`: `{ beforeAll, beforeEach,
 * afterEach, afterAll, inTest }`, where `inTest()` says whether a test is running now.
 */
export function useCassetteWith(hooks, file, options = {}) {
  const shown = String(file);
  if (hooks.inTest()) {
    throw new Error(
      `mcp-cassette: useCassette(${JSON.stringify(shown)}) was called inside a test. Call it at ` +
        `describe scope: it registers its own beforeAll, beforeEach, afterEach and afterAll hooks`,
    );
  }
  const opts = checkOptions(options);
  const path = resolve(shown);
  const header = readHeader(path, shown);
  const transport = header.transport === "http" ? "http" : "stdio";
  if (opts.failOnUnused && transport === "stdio") {
    throw new TypeError(
      `mcp-cassette: failOnUnused needs an HTTP cassette; ${shown} is a stdio cassette, whose ` +
        `replays the client spawns. Run the tests under \`mcp-cassette exec --fail-on-unused\` ` +
        `instead (docs/exec.md)`,
    );
  }
  return transport === "http" ? httpHandle(hooks, path, shown, opts) : stdioHandle(path, shown, opts);
}

function stdioHandle(path, shown, opts) {
  return Object.freeze({
    file: path,
    transport: "stdio",
    get command() {
      return [binaryPath(), "replay", path, ...sharedFlags(opts)];
    },
    get url() {
      throw new Error(`mcp-cassette: ${shown} is a stdio cassette; spawn .command instead of connecting to .url`);
    },
    get server() {
      throw new Error(`mcp-cassette: ${shown} is a stdio cassette; it has no replay server of its own, spawn .command`);
    },
  });
}

function httpHandle(hooks, path, shown, opts) {
  let server;
  let failedStart;
  hooks.beforeAll(async () => {
    server = new Server(path, shown, opts);
    try {
      await server.start();
    } catch (err) {
      // Kept for beforeEach: a failing beforeAll is reported apart from the tests (vitest skips
      // them), while a failing beforeEach fails each test with the cause in its own output.
      failedStart = err;
    }
  }, START_TIMEOUT_MS + STOP_TIMEOUT_MS);
  hooks.beforeEach(async () => {
    if (failedStart) throw failedStart;
  });
  hooks.afterEach(async () => {
    if (failedStart || server?.url === undefined) return;
    const misses = await server.drain();
    if (opts.onMiss === "warn") return;
    const error = missesToError(misses);
    if (error) throw error;
  });
  hooks.afterAll(async () => {
    // Read before the server stops; thrown after, so the replay never outlives the block.
    let unused;
    try {
      if (opts.failOnUnused && !failedStart && server?.url !== undefined) {
        unused = unusedToError(await server.unused(), shown);
      }
    } finally {
      await server?.stop();
    }
    if (unused) throw unused;
  }, STOP_TIMEOUT_MS + 1_000);
  const current = () => {
    if (server?.url !== undefined) server.checkAlive();
    if (server?.url === undefined) {
      throw new Error(
        `mcp-cassette: the replay server for ${shown} is not running yet. Read .url inside a ` +
          `test or beforeEach, not at describe scope`,
      );
    }
    return server;
  };
  return Object.freeze({
    file: path,
    transport: "http",
    get url() {
      return current().url;
    },
    get server() {
      const live = current();
      return Object.freeze({
        url: live.url,
        pid: live.child.pid,
        /** Misses drained so far in this block (each test's are drained after it). */
        misses: () => live.drained,
      });
    },
    get command() {
      throw new Error(`mcp-cassette: ${shown} is an http cassette; connect to .url instead of spawning .command`);
    },
  });
}
