//! client (placeholder: filled by its issue).
