// The package's main entry: where the native binary is. Test-framework entry points
// (`mcp-cassette/vitest`, `mcp-cassette/jest`) are separate subpath exports built on this.
export {
  BINARY_ENV,
  BinaryNotFoundError,
  SUPPORTED_PLATFORMS,
  binaryPath,
  platformPackage,
} from "./binary.js";
