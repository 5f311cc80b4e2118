//! redact (placeholder: filled by its issue).
