//! Cassette codec throughput: `bench_codec gen <file> <MB>` writes a synthetic cassette through
//! the real writer; `bench_codec read <file>` streams it back through the real reader (every
//! entry parsed and validated); `bench_codec copy <in> <out>` does both, as a rewriting tool
//! would. Each prints MB/s; run under `/usr/bin/time -v` for peak RSS.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use mcp_cassette::cassette::{Dir, Entry, Header, Reader, Transport, Writer};
use mcp_cassette::jsonrpc::Frame;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["gen", path, mb] => generate(Path::new(path), mb.parse().expect("MB")),
        ["read", path] => read(Path::new(path)),
        ["copy", input, output] => copy(Path::new(input), Path::new(output)),
        _ => {
            eprintln!("usage: bench_codec gen <file> <MB> | read <file> | copy <in> <out>");
            std::process::exit(2);
        }
    }
}

fn report(what: &str, bytes: u64, started: Instant, entries: u64) {
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{{\"op\":\"{what}\",\"bytes\":{bytes},\"entries\":{entries},\"seconds\":{secs:.3},\"mb_per_s\":{:.1}}}",
        bytes as f64 / 1e6 / secs
    );
}

fn generate(path: &Path, mb: u64) {
    let started = Instant::now();
    let file = File::create(path).expect("create");
    let mut w = Writer::new(BufWriter::with_capacity(1 << 20, file));
    let header = Header::new(
        "mcp-cassette@bench",
        "2026-12-01T00:00:00.000Z",
        Transport::Stdio,
    );
    w.write_header(&header).expect("write");
    let target = mb * 1_000_000;
    let mut written = 0u64;
    let mut n = 0u64;
    while written < target {
        let req = format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"search","arguments":{{"query":"weather in city number {n}","limit":10,"filters":{{"lang":"en","safe":true}}}}}}}}"#
        );
        let res = format!(
            r#"{{"jsonrpc":"2.0","id":{n},"result":{{"content":[{{"type":"text","text":"Result {n}: The forecast for the requested city is mild with light winds from the south-west; expect clouds in the afternoon and a chance of rain after dark. Temperatures range from 9 to 14 degrees."}}],"isError":false}}}}"#
        );
        for (dir, text) in [(Dir::C2s, req), (Dir::S2c, res)] {
            let frame = Frame::parse(&text).expect("frame");
            let entry = Entry::new_frame(n, dir, frame);
            let line = entry.to_line();
            written += line.len() as u64 + 1;
            w.write_line(&line).expect("write");
        }
        n += 1;
    }
    w.flush().expect("flush");
    report("write", written, started, n * 2);
}

fn read(path: &Path) {
    let started = Instant::now();
    let bytes = std::fs::metadata(path).expect("stat").len();
    let reader = Reader::open(path).expect("open");
    let mut entries = 0u64;
    for entry in reader {
        entry.expect("entry");
        entries += 1;
    }
    report("read", bytes, started, entries);
}

fn copy(input: &Path, output: &Path) {
    let started = Instant::now();
    let bytes = std::fs::metadata(input).expect("stat").len();
    let reader = Reader::open(input).expect("open");
    let file = File::create(output).expect("create");
    let mut w = Writer::new(BufWriter::with_capacity(1 << 20, file));
    w.write_header(reader.header()).expect("write");
    let mut entries = 0u64;
    for entry in reader {
        w.write_entry(&entry.expect("entry")).expect("write");
        entries += 1;
    }
    w.into_inner().flush().expect("flush");
    report("copy", bytes, started, entries);
}
