//! Fault injection (`replay --fault`, docs/replay.md "Fault injection"): a replay that is slow,
//! fails some requests, or goes away, on purpose and reproducibly, so a test can show how an
//! agent copes with a server that misbehaves.
//!
//! This module parses the faults and decides, request by request, which apply; the front-ends
//! carry the decisions out (a pause, an error answer, an HTTP status, the end of the
//! connection). Every decision is a function of the seed, the request's position in the run
//! (1-based, counting every client request in arrival order) and the fault's position on the
//! command line, never of the clock, so the same seed and the same requests give the same
//! faults on any machine.
//!
//! Grammar, one fault per `--fault`:
//!
//! ```text
//! fault    := kind "=" value ["@" share] [":" method [":" tool]]
//! latency=50ms | latency=20ms..80ms     a pause before the answer (fixed, or uniform in the range)
//! error=-32603                          the answer replaced by a JSON-RPC error with this code
//! http-status=503                       (--listen only) the answer replaced by this HTTP status
//! drop-after=5                          the replay goes away after answering 5 requests
//! slow-sse=100ms                        (--listen only) a pause before each event of a stream
//! ```
//!
//! `share` (0 < share ≤ 1, default 1) is the fraction of matching requests the fault hits;
//! `method` limits it to one method, and `tool` (with `tools/call`) to one tool. A fault with no
//! method leaves the handshake (`initialize`, `server/discover`) alone, so a client can still
//! connect to a replay that fails everything else.

use std::fmt;
use std::time::Duration;

/// The longest pause a fault may ask for: long enough to trip any client timeout, short enough
/// that a typo (`latency=50000s`) is refused rather than hanging a test run.
pub const MAX_PAUSE: Duration = Duration::from_secs(600);

/// The handshake methods a fault without a method leaves alone.
const HANDSHAKE: [&str; 2] = ["initialize", "server/discover"];

/// A `--fault` that could not be read. `Display` is the whole message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "replay: --fault \"{spec}\": {why}. A fault is kind=value[@share][:method[:tool]], kind one of latency, error, http-status, drop-after, slow-sse (docs/replay.md, \"Fault injection\")"
)]
pub struct FaultError {
    pub spec: String,
    pub why: String,
}

/// What a fault does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A pause before the answer, uniform in `min..=max`.
    Latency { min: Duration, max: Duration },
    /// A JSON-RPC error with this code instead of the answer.
    Error(i64),
    /// This HTTP status instead of the answer (HTTP only).
    HttpStatus(u16),
    /// Go away once this many requests were answered.
    DropAfter(u64),
    /// A pause before each event of a streamed answer (HTTP only).
    SlowSse(Duration),
}

/// One parsed `--fault`.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    pub spec: String,
    pub kind: Kind,
    /// Fraction of matching requests hit, in (0, 1].
    pub share: f64,
    pub method: Option<String>,
    pub tool: Option<String>,
}

impl Fault {
    /// Parses one `--fault` value.
    pub fn parse(spec: &str) -> Result<Fault, FaultError> {
        let fail = |why: String| FaultError {
            spec: spec.to_owned(),
            why,
        };
        let mut parts = spec.splitn(3, ':');
        let head = parts.next().unwrap_or_default();
        let method = parts.next().map(str::to_owned);
        let tool = parts.next().map(str::to_owned);
        if method.as_deref() == Some("") {
            return Err(fail("the method after \":\" is empty".to_owned()));
        }
        if tool.as_deref() == Some("") {
            return Err(fail("the tool after the second \":\" is empty".to_owned()));
        }
        if tool.is_some() && method.as_deref() != Some("tools/call") {
            return Err(fail(
                "a tool name filters tools/call only (error=-32603:tools/call:<tool>)".to_owned(),
            ));
        }
        let Some((name, rest)) = head.split_once('=') else {
            return Err(fail("no \"=\" between the kind and its value".to_owned()));
        };
        let (value, share) = match rest.split_once('@') {
            Some((value, share)) => (value, Some(share)),
            None => (rest, None),
        };
        let kind = match name {
            "latency" => {
                let (min, max) = match value.split_once("..") {
                    Some((lo, hi)) => (pause(lo).map_err(&fail)?, pause(hi).map_err(&fail)?),
                    None => {
                        let d = pause(value).map_err(&fail)?;
                        (d, d)
                    }
                };
                if min > max {
                    return Err(fail(format!(
                        "the range {value} runs backwards; write the shorter pause first"
                    )));
                }
                Kind::Latency { min, max }
            }
            "error" => Kind::Error(value.parse().map_err(|_| {
                fail(format!(
                    "{value:?} is not a JSON-RPC error code (a whole number, such as -32603)"
                ))
            })?),
            "http-status" => match value.parse::<u16>() {
                Ok(status @ 400..=599) => Kind::HttpStatus(status),
                _ => {
                    return Err(fail(format!(
                        "{value:?} is not an HTTP error status (400 to 599)"
                    )));
                }
            },
            "drop-after" => Kind::DropAfter(value.parse().map_err(|_| {
                fail(format!(
                    "{value:?} is not a number of requests (a whole number, 0 or more)"
                ))
            })?),
            "slow-sse" => Kind::SlowSse(pause(value).map_err(&fail)?),
            other => return Err(fail(format!("unknown kind {other:?}"))),
        };
        let per_request = matches!(
            kind,
            Kind::Latency { .. } | Kind::Error(_) | Kind::HttpStatus(_)
        );
        if !per_request && (share.is_some() || method.is_some()) {
            return Err(fail(format!(
                "{name} applies to the whole replay: it takes no @share and no :method"
            )));
        }
        let share = match share {
            None => 1.0,
            Some(text) => match text.parse::<f64>() {
                Ok(s) if s > 0.0 && s <= 1.0 => s,
                _ => {
                    return Err(fail(format!(
                        "the share {text:?} is not a fraction above 0 and at most 1 (0.2 is one request in five)"
                    )));
                }
            },
        };
        Ok(Fault {
            spec: spec.to_owned(),
            kind,
            share,
            method,
            tool,
        })
    }

    /// Whether this fault is about a request with `method` (and, for `tools/call`, `tool`).
    fn matches(&self, method: &str, tool: Option<&str>) -> bool {
        match &self.method {
            None => !HANDSHAKE.contains(&method),
            Some(m) => m == method && self.tool.as_deref().is_none_or(|t| tool == Some(t)),
        }
    }
}

/// `50ms` or `2s`, at most [`MAX_PAUSE`].
fn pause(text: &str) -> Result<Duration, String> {
    let (number, unit) = match (text.strip_suffix("ms"), text.strip_suffix('s')) {
        (Some(n), _) => (n, 1),
        (None, Some(n)) => (n, 1000),
        _ => {
            return Err(format!(
                "{text:?} is not a pause: a whole number of ms or s (50ms, 2s)"
            ));
        }
    };
    let ms = number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .ok_or_else(|| format!("{text:?} is not a pause: a whole number of ms or s (50ms, 2s)"))?;
    let pause = Duration::from_millis(ms);
    if pause > MAX_PAUSE {
        return Err(format!(
            "{text} is longer than the {} s a fault may pause",
            MAX_PAUSE.as_secs()
        ));
    }
    Ok(pause)
}

/// What the front-end does with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Decision {
    /// Pause this long before answering (or before failing).
    pub pause: Duration,
    /// Instead of the recorded answer: what to send. The recording is not consumed, so a retry
    /// is answered from the cassette.
    pub replace: Option<Replace>,
    /// Go away without answering: the input is no longer read, the connection is closed.
    pub drop: bool,
}

/// A failure answered in place of the recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replace {
    Error(i64),
    HttpStatus(u16),
}

/// How many faults were injected, for the end-of-session summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub paused: u64,
    pub errors: u64,
    pub statuses: u64,
    /// The request the replay went away at, when it did.
    pub dropped_at: Option<u64>,
}

/// The faults of one replay and its progress through the requests.
#[derive(Debug, Clone)]
pub struct Injector {
    faults: Vec<Fault>,
    seed: u64,
    requests: u64,
    counts: Counts,
}

impl Injector {
    pub fn new(faults: Vec<Fault>, seed: u64) -> Injector {
        Injector {
            faults,
            seed,
            requests: 0,
            counts: Counts::default(),
        }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The first fault only an HTTP replay can carry out, for refusing it on stdio.
    pub fn http_only(&self) -> Option<&Fault> {
        self.faults
            .iter()
            .find(|f| matches!(f.kind, Kind::HttpStatus(_) | Kind::SlowSse(_)))
    }

    /// The pause between the events of a streamed answer, when `slow-sse` asked for one.
    pub fn sse_gap(&self) -> Option<Duration> {
        self.faults.iter().find_map(|f| match f.kind {
            Kind::SlowSse(gap) => Some(gap),
            _ => None,
        })
    }

    /// Decides the next client request, of `method` (and `tool` for a `tools/call`). Latency
    /// faults add up; the first error or status fault that hits replaces the answer.
    pub fn decide(&mut self, method: &str, tool: Option<&str>) -> Decision {
        self.requests += 1;
        let n = self.requests;
        let mut decision = Decision::default();
        if self
            .faults
            .iter()
            .any(|f| matches!(f.kind, Kind::DropAfter(k) if n > k))
        {
            self.counts.dropped_at.get_or_insert(n);
            decision.drop = true;
            return decision;
        }
        for (i, fault) in self.faults.iter().enumerate() {
            if !fault.matches(method, tool) || roll(self.seed, n, i as u64, 0) >= fault.share {
                continue;
            }
            match fault.kind {
                Kind::Latency { min, max } => {
                    let span = max.saturating_sub(min).as_millis() as f64;
                    let extra = (roll(self.seed, n, i as u64, 1) * (span + 1.0)).floor() as u64;
                    decision.pause += min + Duration::from_millis(extra.min(span as u64));
                }
                Kind::Error(code) if decision.replace.is_none() => {
                    decision.replace = Some(Replace::Error(code));
                }
                Kind::HttpStatus(status) if decision.replace.is_none() => {
                    decision.replace = Some(Replace::HttpStatus(status));
                }
                _ => {}
            }
        }
        if !decision.pause.is_zero() {
            self.counts.paused += 1;
        }
        match decision.replace {
            Some(Replace::Error(_)) => self.counts.errors += 1,
            Some(Replace::HttpStatus(_)) => self.counts.statuses += 1,
            None => {}
        }
        decision
    }

    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// The summary line (without the `mcp-cassette replay: ` prefix): what was injected, and
    /// the seed that repeats it.
    pub fn summary(&self) -> String {
        let c = self.counts;
        let mut line = format!(
            "faults injected (--fault-seed {}): {} error answer(s), {} HTTP status answer(s), {} delayed answer(s)",
            self.seed, c.errors, c.statuses, c.paused
        );
        if let Some(n) = c.dropped_at {
            line.push_str(&format!("; went away at request {n}"));
        }
        line
    }
}

impl fmt::Display for Replace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Replace::Error(code) => write!(f, "error={code}"),
            Replace::HttpStatus(status) => write!(f, "http-status={status}"),
        }
    }
}

/// The JSON-RPC error frame an `error=` fault answers with, carrying the client's id (its JSON
/// text).
pub fn error_frame(id_json: &str, code: i64) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id_json},\"error\":{{\"code\":{code},\"message\":\"mcp-cassette replay: injected fault (--fault error={code})\"}}}}"
    )
}

/// The body an `http-status=` fault answers with: a JSON-RPC error naming the status.
pub fn status_body(id_json: &str, status: u16) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id_json},\"error\":{{\"code\":-32603,\"message\":\"mcp-cassette replay: injected fault (--fault http-status={status})\"}}}}"
    )
}

/// A seed for a run that named none: different on each run, printed so it can be named.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    // Small enough to type back; the pid keeps two replays started together apart.
    mix(nanos ^ (u64::from(std::process::id()) << 32)) % 1_000_000_000
}

/// A uniform number in [0, 1) for request `n`, fault `i`, draw `k`.
fn roll(seed: u64, n: u64, i: u64, k: u64) -> f64 {
    let bits = mix(mix(mix(seed ^ 0x6d63_702d_6361_7373) ^ n) ^ (i << 8 | k));
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// SplitMix64's finaliser: a fixed, portable mixing function.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The client request a line carries, read just far enough to decide its faults: its id's JSON
/// text, method, and tool name for a `tools/call`. `None` for anything else (a notification, a
/// response, a line that is not JSON-RPC), which faults leave alone.
pub fn peek(text: &str) -> Option<(String, String, Option<String>)> {
    use serde::Deserialize;
    use serde_json::value::RawValue;
    #[derive(Deserialize)]
    struct Params {
        name: Option<String>,
    }
    #[derive(Deserialize)]
    struct Peek<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        method: Option<String>,
        params: Option<serde::de::IgnoredAny>,
    }
    #[derive(Deserialize)]
    struct Call {
        params: Option<Params>,
    }
    let peek: Peek<'_> = serde_json::from_str(text).ok()?;
    let (id, method) = (peek.id?, peek.method?);
    if id.get() == "null" {
        return None;
    }
    let tool = (method == "tools/call" && peek.params.is_some())
        .then(|| serde_json::from_str::<Call>(text).ok()?.params?.name)
        .flatten();
    Some((id.get().to_owned(), method, tool))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(spec: &str) -> Fault {
        Fault::parse(spec).unwrap_or_else(|e| panic!("{e}"))
    }

    fn refusal(spec: &str) -> String {
        Fault::parse(spec).unwrap_err().why
    }

    #[test]
    fn grammar() {
        let f = parse("error=-32603@0.2:tools/call:slow_tool");
        assert_eq!(f.kind, Kind::Error(-32603));
        assert_eq!(f.share, 0.2);
        assert_eq!(f.method.as_deref(), Some("tools/call"));
        assert_eq!(f.tool.as_deref(), Some("slow_tool"));
        assert_eq!(
            parse("latency=20ms..2s").kind,
            Kind::Latency {
                min: Duration::from_millis(20),
                max: Duration::from_secs(2)
            }
        );
        assert_eq!(parse("http-status=503@0.1").kind, Kind::HttpStatus(503));
        assert_eq!(parse("drop-after=0").kind, Kind::DropAfter(0));
        assert_eq!(
            parse("slow-sse=100ms").kind,
            Kind::SlowSse(Duration::from_millis(100))
        );
        assert_eq!(
            parse("latency=5ms:resources/read").method.as_deref(),
            Some("resources/read")
        );
    }

    #[test]
    fn refusals_say_what_is_wrong() {
        assert!(refusal("latency").contains("no \"=\""));
        assert!(refusal("lag=5ms").contains("unknown kind \"lag\""));
        assert!(refusal("latency=5").contains("not a pause"));
        assert!(refusal("latency=-5ms").contains("not a pause"));
        assert!(refusal("latency=9000s").contains("longer than the 600 s"));
        assert!(refusal("latency=80ms..20ms").contains("runs backwards"));
        assert!(refusal("error=boom").contains("not a JSON-RPC error code"));
        assert!(refusal("http-status=200").contains("400 to 599"));
        assert!(refusal("drop-after=-1").contains("number of requests"));
        assert!(refusal("drop-after=3@0.5").contains("whole replay"));
        assert!(refusal("slow-sse=5ms:tools/call").contains("whole replay"));
        assert!(refusal("error=1@0").contains("share \"0\""));
        assert!(refusal("error=1@1.5").contains("share"));
        assert!(refusal("error=1@NaN").contains("share"));
        assert!(refusal("error=1:").contains("method"));
        assert!(refusal("error=1:ping:x").contains("tools/call only"));
        let message = Fault::parse("x").unwrap_err().to_string();
        assert!(message.starts_with("replay: --fault \"x\": "), "{message}");
    }

    fn run(specs: &[&str], seed: u64, requests: &[(&str, Option<&str>)]) -> Vec<Decision> {
        let faults = specs.iter().map(|s| parse(s)).collect();
        let mut injector = Injector::new(faults, seed);
        requests
            .iter()
            .map(|(m, t)| injector.decide(m, *t))
            .collect()
    }

    #[test]
    fn the_same_seed_gives_the_same_faults() {
        let calls: Vec<(&str, Option<&str>)> = vec![("tools/call", Some("a")); 200];
        let specs = ["error=-1@0.3", "latency=10ms..50ms@0.5"];
        let first = run(&specs, 7, &calls);
        assert_eq!(first, run(&specs, 7, &calls));
        assert_ne!(first, run(&specs, 8, &calls));
        let errors = first.iter().filter(|d| d.replace.is_some()).count();
        assert!((30..=90).contains(&errors), "about 30% of 200: {errors}");
        for d in &first {
            assert!(d.pause.is_zero() || (10..=50).contains(&(d.pause.as_millis() as u64)));
        }
        // Frozen: a change to the mixing would silently change every recorded seed's faults.
        let hits: Vec<usize> = first
            .iter()
            .enumerate()
            .filter(|(_, d)| d.replace.is_some())
            .map(|(i, _)| i)
            .take(5)
            .collect();
        assert_eq!(hits, FROZEN_HITS);
    }

    const FROZEN_HITS: [usize; 5] = [11, 13, 16, 17, 20];

    #[test]
    fn filters_handshake_and_precedence() {
        let d = run(
            &[
                "error=-5:tools/call:slow",
                "latency=5ms",
                "latency=7ms",
                "http-status=503",
            ],
            1,
            &[
                ("initialize", None),
                ("tools/call", Some("slow")),
                ("tools/call", Some("fast")),
            ],
        );
        assert_eq!(d[0], Decision::default(), "the handshake is left alone");
        assert_eq!(d[1].replace, Some(Replace::Error(-5)), "the first hit wins");
        assert_eq!(d[1].pause, Duration::from_millis(12), "pauses add up");
        assert_eq!(d[2].replace, Some(Replace::HttpStatus(503)));
        let named = run(&["error=-1:initialize"], 1, &[("initialize", None)]);
        assert_eq!(named[0].replace, Some(Replace::Error(-1)));
    }

    #[test]
    fn drop_after_counts_every_request() {
        let faults = vec![parse("drop-after=2")];
        let mut injector = Injector::new(faults, 0);
        assert!(!injector.decide("initialize", None).drop);
        assert!(!injector.decide("ping", None).drop);
        assert!(injector.decide("ping", None).drop);
        assert_eq!(injector.counts().dropped_at, Some(3));
        assert!(injector.summary().ends_with("; went away at request 3"));
    }

    #[test]
    fn peeking() {
        assert_eq!(
            peek(
                r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"t","arguments":{}}}"#
            ),
            Some((
                "\"a\"".to_owned(),
                "tools/call".to_owned(),
                Some("t".to_owned())
            ))
        );
        assert_eq!(
            peek(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#),
            Some(("3".to_owned(), "ping".to_owned(), None))
        );
        assert_eq!(
            peek(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            None
        );
        assert_eq!(peek(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#), None);
        assert_eq!(peek("not json"), None);
        assert!(
            error_frame("7", -32603)
                .starts_with(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"#)
        );
    }
}
