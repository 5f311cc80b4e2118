use std::path::Path;
use std::time::Instant;
fn main() {
    let p = std::env::args().nth(1).unwrap();
    let mode = std::env::args().nth(2).unwrap();
    let t = Instant::now();
    let r = mcp_cassette::cassette::Reader::open(Path::new(&p)).unwrap();
    let mut n = 0usize;
    if mode == "reader" {
        for e in r {
            let e = e.unwrap();
            n += e.line as usize;
        }
    } else if mode == "lines" {
        use std::io::BufRead;
        let f = std::io::BufReader::with_capacity(256 * 1024, std::fs::File::open(&p).unwrap());
        for l in f.lines() {
            n += l.unwrap().len();
        }
    } else {
        let l = mcp_cassette::lint::cassette::lint_cassette(r, |_| {}).unwrap();
        n = l.output.len();
    }
    eprintln!("{mode}: {:?} {n}", t.elapsed());
}
