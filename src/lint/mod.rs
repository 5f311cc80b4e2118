//! lint (placeholder: filled by its issue).
