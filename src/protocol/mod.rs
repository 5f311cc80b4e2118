//! MCP knowledge that does not depend on a transport: eras, header parameters, the method
//! names the engine treats specially, and the protocol's fixed strings and numbers (versions,
//! `_meta` keys, error codes), kept here once for every module that speaks MCP. (Canonical JSON
//! for matching is [`crate::json`]'s.)

pub mod era;
pub mod error_code;
pub mod header_param;
pub mod meta;
pub mod version;

pub use era::Era;

/// `subscriptions/listen` (2026-07-28).
pub const LISTEN_METHOD: &str = "subscriptions/listen";
/// The notification that acknowledges a subscription.
pub const ACKNOWLEDGED_METHOD: &str = "notifications/subscriptions/acknowledged";
/// The `_meta` key tagging frames with the subscription they belong to.
pub const SUBSCRIPTION_ID_KEY: &str = meta::SUBSCRIPTION_ID;
