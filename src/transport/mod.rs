//! transport (placeholder: filled by its issue).
