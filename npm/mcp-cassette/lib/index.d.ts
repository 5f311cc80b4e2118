/** Environment variable naming a binary to run instead of the platform package's. */
export declare const BINARY_ENV: "MCP_CASSETTE_BINARY";

/** The platforms a binary package is published for, as `<process.platform>-<process.arch>`. */
export declare const SUPPORTED_PLATFORMS: readonly string[];

/** Raised when no binary can be found; the message says what is missing and how to fix it. */
export declare class BinaryNotFoundError extends Error {
  name: "BinaryNotFoundError";
}

/** `@mcp-cassette/<os>-<cpu>` for a platform and architecture as Node names them. */
export declare function platformPackage(platform?: string, arch?: string): string;

/**
 * Absolute path of the binary to run: `$MCP_CASSETTE_BINARY` when set, otherwise the one in this
 * platform's package. Throws `BinaryNotFoundError` when neither exists.
 */
export declare function binaryPath(options?: {
  env?: Record<string, string | undefined>;
  platform?: string;
  arch?: string;
}): string;
