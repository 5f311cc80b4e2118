//! The floor for any stdio recording proxy: spawn a command and copy bytes both ways on two
//! threads, capturing nothing. `scripts/bench-record.sh` runs it beside `record`, so the
//! proxy's own cost is told apart from what any extra process on the path costs (two more pipe
//! hops per round trip, each a thread wake-up).
//!
//! ```text
//! bare_relay <command...>
//! ```

use std::io::{self, Read, Write};
use std::process::{Command, ExitCode, Stdio};
use std::thread;

fn copy(mut from: impl Read, mut to: impl Write) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if to.write_all(&buf[..n]).and_then(|()| to.flush()).is_err() {
                    return;
                }
            }
        }
    }
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let Some((program, args)) = argv.split_first() else {
        eprintln!("usage: bare_relay <command...>");
        return ExitCode::from(2);
    };
    let mut child = match Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            eprintln!("bare_relay: {program}: {e}");
            return ExitCode::from(1);
        }
    };
    let (Some(to_child), Some(from_child)) = (child.stdin.take(), child.stdout.take()) else {
        return ExitCode::from(1);
    };
    thread::spawn(move || copy(io::stdin().lock(), to_child));
    let down = thread::spawn(move || copy(from_child, io::stdout().lock()));
    let _ = down.join();
    match child.wait() {
        Ok(status) => ExitCode::from(u8::try_from(status.code().unwrap_or(1) & 0xff).unwrap_or(1)),
        Err(_) => ExitCode::from(1),
    }
}
