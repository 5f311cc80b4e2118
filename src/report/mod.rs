//! report (placeholder: filled by its issue).
