//! Filling a [`LineBuffer`] from an async reader: the async side of the one line reader
//! (`crate::line`), for transports that run on tokio.

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::line::LineBuffer;

/// Reads once from `input` into `lines`; `false` when the input has ended.
pub async fn fill_from(
    lines: &mut LineBuffer,
    input: &mut (impl AsyncRead + Unpin),
) -> std::io::Result<bool> {
    loop {
        match input.read(lines.spare()).await {
            Ok(n) => {
                lines.filled(n);
                return Ok(n > 0);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}
