//! JSON-RPC error codes MCP uses, and the modern era's own.

/// The text is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON, but not a valid JSON-RPC request.
pub const INVALID_REQUEST: i64 = -32600;
/// The method is not served.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// The receiver failed while handling the request.
pub const INTERNAL_ERROR: i64 = -32603;

/// Modern era: an `Mcp-*` HTTP header disagrees with the body.
pub const HEADER_MISMATCH: i64 = -32020;
/// Modern era: the request needs a client capability that was not declared.
pub const MISSING_CAPABILITY: i64 = -32021;
/// Modern era: the requested protocol version is not served (`data.supported` lists those that are).
pub const UNSUPPORTED_VERSION: i64 = -32022;
