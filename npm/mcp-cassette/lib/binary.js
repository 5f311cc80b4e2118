// Where the native mcp-cassette binary lives. Shared by the `mcp-cassette` launcher and, later,
// by the test-framework entry points (`mcp-cassette/vitest`, `mcp-cassette/jest`), which spawn
// the same binary: one lookup, one error message.
//
// The binary ships in one package per platform, `@mcp-cassette/<os>-<cpu>`, listed as optional
// dependencies of this package; each declares `os` and `cpu`, so npm installs only the one that
// fits and there is no install script to run (docs/npm.md).

import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** Environment variable naming a binary to run instead of the platform package's. */
export const BINARY_ENV = "MCP_CASSETTE_BINARY";

/** The platforms a package is published for, as `<process.platform>-<process.arch>`. */
export const SUPPORTED_PLATFORMS = Object.freeze([
  "darwin-arm64",
  "darwin-x64",
  "linux-arm64",
  "linux-x64",
  "win32-x64",
]);

const require = createRequire(import.meta.url);

/** Raised when no binary can be found; `message` says what is missing and how to fix it. */
export class BinaryNotFoundError extends Error {
  constructor(message) {
    super(message);
    this.name = "BinaryNotFoundError";
  }
}

/** `@mcp-cassette/<os>-<cpu>` for a platform and architecture as Node names them. */
export function platformPackage(platform = process.platform, arch = process.arch) {
  return `@mcp-cassette/${platform}-${arch}`;
}

function ownVersion() {
  try {
    return require("../package.json").version;
  } catch {
    return undefined;
  }
}

/**
 * The absolute path of the binary to run: `$MCP_CASSETTE_BINARY` when set, otherwise the file
 * inside this platform's package. Throws `BinaryNotFoundError` with a fix when neither exists.
 */
export function binaryPath({ env = process.env, platform = process.platform, arch = process.arch } = {}) {
  const override = env[BINARY_ENV];
  if (override) {
    if (!existsSync(override)) {
      throw new BinaryNotFoundError(
        `mcp-cassette: ${BINARY_ENV} is set to "${override}", but no file exists there.\n` +
          `Fix: point ${BINARY_ENV} at an mcp-cassette binary, or unset it to use the one from npm.`,
      );
    }
    return override;
  }
  const key = `${platform}-${arch}`;
  const pkg = platformPackage(platform, arch);
  const exe = platform === "win32" ? "mcp-cassette.exe" : "mcp-cassette";
  if (!SUPPORTED_PLATFORMS.includes(key)) {
    throw new BinaryNotFoundError(
      `mcp-cassette: no prebuilt binary is published for ${key} ` +
        `(published: ${SUPPORTED_PLATFORMS.join(", ")}).\n` +
        `Fix: build the binary from source (cargo install --locked mcp-cassette, or cargo build ` +
        `--release in a clone) and set ${BINARY_ENV} to its path.`,
    );
  }
  let manifest;
  try {
    manifest = require.resolve(`${pkg}/package.json`);
  } catch {
    const version = ownVersion();
    const spec = version ? `${pkg}@${version}` : pkg;
    throw new BinaryNotFoundError(
      `mcp-cassette: the native binary for ${key} is missing: the package ${pkg} is not installed.\n` +
        `npm installs it with mcp-cassette as an optional dependency, unless optional dependencies ` +
        `were left out (--omit=optional, --no-optional) or the lockfile was written on another ` +
        `platform without it.\n` +
        `Fix: npm install --save-dev ${spec} (the same version as mcp-cassette), ` +
        `or set ${BINARY_ENV} to the path of an mcp-cassette binary.`,
    );
  }
  const file = join(dirname(manifest), "bin", exe);
  if (!existsSync(file)) {
    throw new BinaryNotFoundError(
      `mcp-cassette: ${pkg} is installed but holds no bin/${exe}; the installation is damaged.\n` +
        `Fix: reinstall it (npm install --save-dev ${pkg}), or set ${BINARY_ENV} to the path of ` +
        `an mcp-cassette binary.`,
    );
  }
  return file;
}
