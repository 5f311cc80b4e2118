//! Every committed fuzz input — the seed corpus and each minimised crash or hang — run through
//! its target's entry point on stable: the quick regression pass docs/fuzzing.md describes. A
//! crash found while fuzzing is fixed once and stays fixed.

use std::path::Path;

use mcp_cassette::fuzzing::TARGETS;

#[test]
fn every_corpus_and_regression_input_passes() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut failed = Vec::new();
    for (name, target) in TARGETS {
        let mut seeds = 0;
        for folder in ["corpus", "regressions"] {
            let dir = fuzz.join(folder).join(name);
            let Ok(listing) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut files: Vec<_> = listing.map(|e| e.unwrap().path()).collect();
            files.sort();
            for file in files {
                let data = std::fs::read(&file).unwrap();
                // A panic names the input, so it can be run again under `cargo fuzz run`.
                let outcome = std::panic::catch_unwind(|| target(&data));
                if outcome.is_err() {
                    failed.push(format!("{name}: {}", file.display()));
                }
                if folder == "corpus" {
                    seeds += 1;
                }
            }
        }
        assert!(seeds >= 10, "{name} has only {seeds} seed inputs");
    }
    assert!(failed.is_empty(), "failing inputs:\n{}", failed.join("\n"));
}
