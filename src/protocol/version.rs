//! Protocol revisions this tool speaks as a client.

/// The legacy-era revision asked for in `initialize` (the reference client asks for this one
/// too, so a server sees the same handshake from either tool).
pub const LEGACY: &str = "2025-06-18";

/// The modern-era revision (no handshake; `server/discover` and per-request `_meta`).
pub const MODERN: &str = "2026-07-28";
