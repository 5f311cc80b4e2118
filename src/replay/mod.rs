//! replay (placeholder: filled by its issue).
