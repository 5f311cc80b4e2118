//! How the scaling tests measure (test builds only): code that reads untrusted text must cost
//! about linearly in it, so a test times the code on an adversarial text and on one four times
//! longer, and requires the second to cost at most [`MAX_RATIO`] times the first.
//!
//! It is a ratio, never an absolute time: each size is timed several times and the fastest kept
//! (what other processes steal only adds time), and a failing ratio is measured again before the
//! test gives up, so a loaded machine does not make it flaky while a quadratic path (×16) still
//! fails every attempt. The lint rules (`lint::scaling`) and the redactor's rules use it.

use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Allowed growth for ×4 input: linear is 4, and the rest is noise and cache effects (the
/// larger text and what the code builds from it fit in fewer cache levels). Code that rescans
/// a prefix per match measures 9 to 16 here.
const MAX_RATIO: f64 = 6.0;
/// Timings per size, the fastest kept.
const RUNS: usize = 3;
/// Whole measurements before a ratio above the limit counts as a failure.
const ATTEMPTS: usize = 6;

/// Held while a scaling test measures. Two of them side by side on a two-core machine share
/// caches, and the larger text, which no longer fits beside the other test's data, looked
/// superlinear; one at a time they measure the code, not the neighbour.
static MEASURING: Mutex<()> = Mutex::new(());

/// The fastest of [`RUNS`] timings of `work` on each of two texts, taken alternately so a
/// burst of load elsewhere slows both sizes rather than one. The small text is run four times
/// per timing, so both timings last about as long: a short timing finds a quiet moment on a
/// busy machine more often than a long one, which made linear code look superlinear. The
/// small figure is the time of one run.
fn fastest(small: &str, large: &str, work: &dyn Fn(&str)) -> (Duration, Duration) {
    let time = |text: &str, times: u32| {
        // Start on a fresh time slice: on a loaded machine a timing longer than what is left
        // of the current one is cut by other processes, whatever the code does.
        std::thread::yield_now();
        let started = Instant::now();
        for _ in 0..times {
            work(black_box(text));
        }
        started.elapsed() / times
    };
    (0..RUNS).fold((Duration::MAX, Duration::MAX), |(t1, t4), _| {
        (t1.min(time(small, 4)), t4.min(time(large, 1)))
    })
}

/// Asserts that `work` on `large` (four times `small`) costs at most [`MAX_RATIO`] times what
/// it costs on `small`.
pub(crate) fn assert_linear(what: &str, small: &str, large: &str, work: &dyn Fn(&str)) {
    // A test that failed while holding the lock poisons it; the others still measure.
    let _alone = MEASURING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // Warm lazily built tables, and the allocator: glibc serves a large block from a fresh
    // mapping (page faults on every call) until one such block has been freed.
    work(small);
    work(large);
    let mut ratios = Vec::new();
    let linear = (0..ATTEMPTS).any(|_| {
        let (t1, t4) = fastest(small, large, work);
        // Below the clock's resolution a ratio means nothing; 20 µs is far above it.
        let ratio = t4.as_secs_f64() / t1.as_secs_f64().max(20e-6);
        ratios.push((ratio, t1, t4));
        if ratio > MAX_RATIO {
            // Give whatever else is running a moment to finish before measuring again.
            std::thread::sleep(Duration::from_millis(20));
        }
        ratio <= MAX_RATIO
    });
    assert!(
        linear,
        "{what}: ×4 input took ×{ratios:.1?} the time (ratio, small, large)"
    );
}
