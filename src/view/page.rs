//! The HTML around the rows: the page's own style and script, inline, and the policy that lets
//! nothing else run or load.

use std::io::{self, Write};

use sha2::{Digest, Sha256};

use super::script_json::write_str;
use crate::protocol::header_param::base64_encode;

/// The page's style and script, kept as plain files beside this one (no build step) and
/// compiled in, so a page needs nothing but itself.
const STYLE: &str = include_str!("assets/view.css");
const SCRIPT: &str = include_str!("assets/view.js");

/// The page's Content-Security-Policy: nothing is fetched (`default-src 'none'` covers
/// connections, frames, fonts and images), and only the inline style and script whose
/// SHA-256 digests are named here apply. Cassette text that slipped into markup could
/// therefore still not run, and the JSON data block is never run (its type is not a script
/// type).
pub(crate) fn content_security_policy() -> String {
    format!(
        "default-src 'none'; script-src '{}'; style-src '{}'; base-uri 'none'; form-action 'none'",
        digest(SCRIPT),
        digest(STYLE)
    )
}

fn digest(text: &str) -> String {
    format!("sha256-{}", base64_encode(&Sha256::digest(text.as_bytes())))
}

/// Everything before the first row: the document head and the start of the data block.
pub(super) fn write_head<W: Write>(out: &mut W, name: &str, header_line: &str) -> io::Result<()> {
    let mut head = Vec::with_capacity(STYLE.len() + 1024);
    head.extend_from_slice(
        b"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
          <meta http-equiv=\"Content-Security-Policy\" content=\"",
    );
    head.extend_from_slice(content_security_policy().as_bytes());
    head.extend_from_slice(
        b"\">\n<meta name=\"referrer\" content=\"no-referrer\">\n\
          <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
          <title>mcp-cassette view</title>\n<style>",
    );
    head.extend_from_slice(STYLE.as_bytes());
    head.extend_from_slice(
        b"</style>\n</head>\n<body>\n\
          <noscript>This page draws the cassette with its own inline script; allow it to run.</noscript>\n\
          <script type=\"application/json\" id=\"mc-data\">{\"name\":",
    );
    write_str(name, &mut head);
    head.extend_from_slice(b",\"header\":");
    write_str(header_line, &mut head);
    head.extend_from_slice(b",\"rows\":[\n");
    out.write_all(&head)
}

/// Everything after the last row: the end of the data block and the script.
pub(super) fn write_tail<W: Write>(out: &mut W) -> io::Result<()> {
    out.write_all(b"\n]}</script>\n<script>")?;
    out.write_all(SCRIPT.as_bytes())?;
    out.write_all(b"</script>\n</body>\n</html>\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inline assets must not end their own element early, or the digests would cover
    /// text the browser never runs.
    #[test]
    fn assets_cannot_close_their_elements() {
        assert!(!SCRIPT.to_ascii_lowercase().contains("</script"));
        assert!(!STYLE.to_ascii_lowercase().contains("</style"));
    }

    #[test]
    fn the_policy_names_both_digests_and_allows_nothing_else() {
        let policy = content_security_policy();
        assert!(policy.starts_with("default-src 'none'; script-src 'sha256-"));
        assert!(!policy.contains("unsafe"));
        assert!(!policy.contains("connect-src"));
        assert_eq!(policy.matches("'sha256-").count(), 2);
    }
}
