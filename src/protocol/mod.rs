//! protocol (placeholder: filled by its issue).
