use aho_corasick::{AhoCorasick, AhoCorasickKind, Input, MatchKind, Span, packed};
use memchr::memmem;
const A: [&str; 22] = [
    "ignore",
    "not",
    ".ssh",
    "id_rsa",
    ".env",
    "credential",
    "api",
    "instead of",
    "rather than",
    "in place of",
    "always",
    "exec",
    "eval",
    "process",
    "shell",
    "-rf",
    "you",
    "act",
    "key",
    "token",
    "password",
    "secret",
];
#[inline(never)]
fn run(mode: &str, texts: &[String]) -> u64 {
    let mut n = 0u64;
    match mode {
        "teddy" => {
            let mut pc = packed::Config::new();
            pc.match_kind(packed::MatchKind::LeftmostLongest);
            let mut pb = pc.builder();
            for a in A {
                pb.add(a);
            }
            let ps = pb.build().unwrap();
            for x in texts {
                let low = x.to_ascii_lowercase();
                let b = low.as_bytes();
                let mut at = 0;
                while at < b.len() {
                    match ps.find_in(b, Span::from(at..b.len())) {
                        Some(m) => {
                            n |= 1 << m.pattern().as_usize();
                            at = m.start() + 1;
                        }
                        None => break,
                    }
                }
            }
        }
        "teddyperm" => {
            let mut pc = packed::Config::new();
            pc.match_kind(packed::MatchKind::LeftmostLongest);
            let mut pb = pc.builder();
            for a in A {
                let v: Vec<u8> = a
                    .bytes()
                    .map(|b| b.to_ascii_lowercase().wrapping_mul(0x9D))
                    .collect();
                pb.add(v);
            }
            let ps = pb.build().unwrap();
            let mut low: Vec<u8> = Vec::new();
            for x in texts {
                low.clear();
                low.extend(x.bytes().map(|b| b.to_ascii_lowercase().wrapping_mul(0x9D)));
                let b = &low[..];
                let mut at = 0;
                while at < b.len() {
                    match ps.find_in(b, Span::from(at..b.len())) {
                        Some(m) => {
                            n |= 1 << m.pattern().as_usize();
                            at = m.start() + 1;
                        }
                        None => break,
                    }
                }
            }
        }
        "teddybuf" => {
            let mut pc = packed::Config::new();
            pc.match_kind(packed::MatchKind::LeftmostLongest);
            let mut pb = pc.builder();
            for a in A {
                pb.add(a);
            }
            let ps = pb.build().unwrap();
            let mut low: Vec<u8> = Vec::new();
            for x in texts {
                low.clear();
                low.extend_from_slice(x.as_bytes());
                low.make_ascii_lowercase();
                let b = &low[..];
                let mut at = 0;
                while at < b.len() {
                    match ps.find_in(b, Span::from(at..b.len())) {
                        Some(m) => {
                            n |= 1 << m.pattern().as_usize();
                            at = m.start() + 1;
                        }
                        None => break,
                    }
                }
            }
        }
        "acci" => {
            let ac = AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .prefilter(false)
                .match_kind(MatchKind::Standard)
                .kind(Some(AhoCorasickKind::DFA))
                .build(A)
                .unwrap();
            for x in texts {
                for m in ac.find_overlapping_iter(x) {
                    n |= 1 << m.pattern().as_usize();
                }
            }
        }
        "aclow" => {
            let ac = AhoCorasick::builder()
                .prefilter(false)
                .match_kind(MatchKind::Standard)
                .kind(Some(AhoCorasickKind::DFA))
                .build(A)
                .unwrap();
            for x in texts {
                let low = x.to_ascii_lowercase();
                for m in ac.find_overlapping_iter(&low) {
                    n |= 1 << m.pattern().as_usize();
                }
            }
        }
        "acll" => {
            let ac = AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .prefilter(false)
                .match_kind(MatchKind::LeftmostLongest)
                .kind(Some(AhoCorasickKind::DFA))
                .build(A)
                .unwrap();
            for x in texts {
                let mut at = 0;
                while let Some(m) = ac.find(Input::new(x).span(at..x.len())) {
                    n |= 1 << m.pattern().as_usize();
                    at = m.start() + 1;
                }
            }
        }
        "memmem" => {
            let fs: Vec<memmem::Finder> = A
                .iter()
                .map(|a| memmem::Finder::new(a.as_bytes()))
                .collect();
            for x in texts {
                let low = x.to_ascii_lowercase();
                for (i, f) in fs.iter().enumerate() {
                    if f.find(low.as_bytes()).is_some() {
                        n |= 1 << i;
                    }
                }
            }
        }
        "bitap" => {
            let mut masks = [0u128; 256];
            let mut starts = 0u128;
            let mut finals = 0u128;
            let mut off = 0;
            let mut final_of = Vec::new();
            for (k, a) in A.iter().enumerate() {
                let b = a.as_bytes();
                starts |= 1 << off;
                for (j, &c) in b.iter().enumerate() {
                    masks[c.to_ascii_lowercase() as usize] |= 1 << (off + j);
                    masks[c.to_ascii_uppercase() as usize] |= 1 << (off + j);
                }
                finals |= 1 << (off + b.len() - 1);
                final_of.push((off + b.len() - 1, k));
                off += b.len();
            }
            assert!(off <= 128);
            for x in texts {
                let mut d = 0u128;
                let mut hit = 0u128;
                for &c in x.as_bytes() {
                    d = ((d << 1) | starts) & masks[c as usize];
                    hit |= d;
                }
                hit &= finals;
                for &(bit, k) in &final_of {
                    if hit >> bit & 1 == 1 {
                        n |= 1 << k;
                    }
                }
            }
        }
        _ => {}
    }
    n
}
fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let real: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string("/tmp/real_texts.json").unwrap()).unwrap();
    let texts: Vec<String> = if std::env::var("SYN").is_ok() {
        let en = [
            "Returns the current weather for a city, including temperature, humidity and wind.",
            "Searches the issue tracker and returns matching issues ordered by relevance.",
            "Creates a new branch from the given base and returns its name and head commit.",
            "Lists files in a directory. Paths are resolved relative to the workspace root.",
            "Use this tool when the user asks about their calendar for a specific day or week.",
            "Results are paginated: pass the cursor from the previous response to continue.",
            "Sends a message to the configured Slack channel and returns the message id.",
        ];
        (0..20000)
            .map(|i| format!("{} {} {}", en[i % 7], en[(i / 7) % 7], en[(i / 49) % 7]))
            .collect()
    } else {
        (0..100)
            .flat_map(|i| real.iter().map(move |t| format!("{i} {t}")))
            .collect()
    };
    let bytes: usize = texts.iter().map(|t| t.len()).sum();
    if mode == "all" {
        for _ in 0..3 {
            for m in ["teddybuf", "teddyperm", "bitap"] {
                let t = std::time::Instant::now();
                let mut n = 0;
                for _ in 0..10 {
                    n |= run(m, &texts);
                }
                println!(
                    "{m}: {:.0} MB/s {n:x}",
                    bytes as f64 * 10.0 / 1e6 / t.elapsed().as_secs_f64()
                );
            }
        }
        return;
    }
    let n = run(&mode, &texts);
    println!("{mode}: {bytes} bytes {n:x}");
}
