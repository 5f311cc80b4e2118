//! contract (placeholder: filled by its issue).
