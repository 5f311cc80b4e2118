//! Child server processes: spawning with piped stdio, and signals.

use std::process::{Child, Command, Stdio};

/// Spawns `argv` with stdin and stdout piped and stderr inherited, so the server's own
/// diagnostics reach the user's terminal unchanged.
pub fn spawn_piped(argv: &[String]) -> std::io::Result<Child> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "empty command"))?;
    Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
}

/// A signal the recorder forwards to its server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Interrupt,
    Terminate,
    Kill,
}

impl Signal {
    fn number(self) -> libc::c_int {
        match self {
            Signal::Interrupt => libc::SIGINT,
            Signal::Terminate => libc::SIGTERM,
            Signal::Kill => libc::SIGKILL,
        }
    }
}

/// Sends `signal` to process `pid`. Errors (the process is gone) are ignored: there is nothing
/// left to stop.
pub fn send_signal(pid: u32, signal: Signal) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    #[expect(
        unsafe_code,
        reason = "kill(2) has no safe wrapper in std; pid and signal are plain integers"
    )]
    // SAFETY: kill takes two integers and touches no memory of ours.
    unsafe {
        libc::kill(pid, signal.number());
    }
}

/// Sends `signal` to every process in process group `pgid` (a command `exec` started in a group
/// of its own, with whatever it spawned). Errors (the group is gone) are ignored.
pub fn send_group_signal(pgid: u32, signal: Signal) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    if pgid <= 1 {
        // 0 and 1 would name our own group or every process we may signal.
        return;
    }
    #[expect(
        unsafe_code,
        reason = "kill(2) has no safe wrapper in std; pid and signal are plain integers"
    )]
    // SAFETY: kill takes two integers and touches no memory of ours.
    unsafe {
        libc::kill(-pgid, signal.number());
    }
}

/// Whether process `pid` still exists (signal 0: nothing is sent).
pub fn is_running(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    #[expect(
        unsafe_code,
        reason = "kill(2) has no safe wrapper in std; pid and signal are plain integers"
    )]
    // SAFETY: kill with signal 0 only checks that the process exists; no memory is touched.
    let found = unsafe { libc::kill(pid, 0) };
    found == 0
}

/// Marks the calling thread as background batch work (Linux `SCHED_BATCH`): it keeps its full
/// share of the CPU, so it is never starved, but waking up it does not preempt a thread that is
/// running. Best effort; elsewhere, or when refused, nothing happens.
///
/// Not `SCHED_IDLE`: that class gets almost no CPU while other work is runnable, and an
/// unprivileged thread cannot leave it again, so on a busy CI machine the capture would fall
/// ever further behind and the recording would end only when the machine went quiet.
pub fn make_current_thread_batch() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        #[expect(
            unsafe_code,
            reason = "sched_setscheduler(2) has no safe wrapper in std; it reads one plain struct we own"
        )]
        // SAFETY: `param` is a valid, initialised sched_param that outlives the call; pid 0
        // names the calling thread and no other memory is touched.
        unsafe {
            libc::sched_setscheduler(0, libc::SCHED_BATCH, &param);
        }
    }
}

/// The exit code a recorder reports for its server's exit status: the code, or 128 + the
/// signal number when the server was killed by a signal the recorder did not forward.
pub fn exit_code(status: std::process::ExitStatus, forwarded: &[Signal]) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return u8::try_from(code & 0xff).unwrap_or(1);
    }
    match status.signal() {
        Some(sig) if forwarded.iter().any(|s| s.number() == sig) => 0,
        Some(sig) => u8::try_from((128 + sig) & 0xff).unwrap_or(1),
        None => 0,
    }
}
