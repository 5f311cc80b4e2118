//! cassette (placeholder: filled by its issue).
