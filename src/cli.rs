//! Command-line types.
