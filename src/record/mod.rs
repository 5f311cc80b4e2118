//! record (placeholder: filled by its issue).
