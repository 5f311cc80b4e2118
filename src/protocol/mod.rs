//! MCP knowledge that does not depend on a transport: eras, header parameters, and the method
//! names the engine treats specially. (Canonical JSON for matching is [`crate::json`]'s.)

pub mod era;
pub mod header_param;

pub use era::Era;

/// `subscriptions/listen` (2026-07-28).
pub const LISTEN_METHOD: &str = "subscriptions/listen";
/// The notification that acknowledges a subscription.
pub const ACKNOWLEDGED_METHOD: &str = "notifications/subscriptions/acknowledged";
/// The `_meta` key tagging frames with the subscription they belong to.
pub const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";
