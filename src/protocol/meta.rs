//! `_meta` keys the modern era defines (docs/check.md, "Eras", describes the lifecycle they carry).

/// The protocol version a modern request is made under.
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// Who the client is (`{name, version}`), on every modern request.
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// What the client can do, on every modern request.
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// Who the server is, in the `server/discover` result.
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// The subscription a frame belongs to (`subscriptions/listen`).
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
