//! Byte classes eight bytes at a time, for the passes the second stage makes over every text.
//!
//! A loop that sets one mask bit per byte through a table does not vectorize, and the phrase
//! pass and the fold screen run over every byte of every text. Here eight bytes are loaded as
//! one `u64` and classified with a few integer operations that touch all eight at once (the
//! high bit of each byte carries the answer), then packed into eight mask bits. On x86-64 the
//! two block masks take SSE2 instead, sixteen bytes per compare (see `sse2`). Every function
//! is exact for every byte value; the tests compare each (both paths of the block masks)
//! against its one-byte-at-a-time definition over all 256 values in every lane.

const LOW: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// High bit of each byte whose low seven bits are at least `n` (`n` at most 0x80): exact on
/// ASCII bytes, and callers mask non-ASCII ones out.
const fn at_least(x: u64, n: u8) -> u64 {
    ((x | HIGH) - LOW * n as u64) & HIGH
}

/// High bit of each byte equal to `c`.
const fn equal(x: u64, c: u8) -> u64 {
    let t = x ^ (LOW * c as u64);
    !(((t & !HIGH) + !HIGH) | t) & HIGH
}

/// The high bits of the eight bytes as eight bits, byte `i` to bit `i`.
const fn pack(m: u64) -> u64 {
    (((m >> 7) & LOW).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

/// The first eight bytes of `bytes`, little-endian, zero-padded past its end.
///
/// `first_chunk`, not `<[u8; 8]>::try_from`: that takes only a slice of exactly eight bytes,
/// and the phrase search loads eight bytes from the middle of a text at every admitted
/// position; through the padding path each load was a `memcpy` call.
#[inline]
pub(crate) fn load(bytes: &[u8]) -> u64 {
    match bytes.first_chunk::<8>() {
        Some(eight) => u64::from_le_bytes(*eight),
        None => {
            let mut eight = [0u8; 8];
            let n = bytes.len().min(8);
            eight[..n].copy_from_slice(&bytes[..n]);
            u64::from_le_bytes(eight)
        }
    }
}

/// ASCII letters, and ASCII digits.
#[inline]
fn letters_and_digits(x: u64) -> (u64, u64) {
    let ascii = !x & HIGH;
    let lower = x | (LOW * 0x20);
    let letter = at_least(lower, b'a') & !at_least(lower, b'z' + 1) & ascii;
    let digit = at_least(x, b'0') & !at_least(x, b'9' + 1) & ascii;
    (letter, digit)
}

/// The offset of the first byte that is not ASCII, eight bytes at a time.
pub(crate) fn first_non_ascii(bytes: &[u8]) -> Option<usize> {
    bytes.chunks(8).enumerate().find_map(|(k, eight)| {
        let high = load(eight) & HIGH;
        (high != 0).then(|| 8 * k + high.trailing_zeros() as usize / 8)
    })
}

/// The eight bytes with ASCII capitals lowercased (`u8::to_ascii_lowercase` on each).
pub(crate) fn ascii_lowercase(x: u64) -> u64 {
    let upper = at_least(x, b'A') & !at_least(x, b'Z' + 1) & !x & HIGH;
    x | (upper >> 2)
}

/// ASCII letters and digits.
#[inline]
fn alnum(x: u64) -> u64 {
    let (letter, digit) = letters_and_digits(x);
    letter | digit
}

/// Per 64-byte block of a text, bit `i` for byte `i` of the block.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Masks {
    /// ASCII letters and digits.
    pub(crate) alnum: u64,
    /// `.`, `~`, `/` and UTF-8 lead bytes of two or more bytes (0xC0 and above): where a
    /// phrase may start besides a word start.
    pub(crate) phrase_lead: u64,
}

/// Per 64-byte block, the bytes the ASCII fold screen looks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FoldMasks {
    /// ASCII letters and digits.
    pub(crate) alnum: u64,
    /// The leetspeak characters `0 1 3 4 5 7 @ $`.
    pub(crate) leet: u64,
}

/// Per 64-byte block, every class the second stage reads of a text: the phrase pass's and the
/// fold screen's masks, and base64 bytes. Computed once per text (see [`text_classes`]) where
/// each pass used to classify the text again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Block {
    /// ASCII letters and digits.
    pub(crate) alnum: u64,
    /// As [`Masks::phrase_lead`].
    pub(crate) phrase_lead: u64,
    /// As [`FoldMasks::leet`].
    pub(crate) leet: u64,
    /// Bytes a base64 run may hold (either alphabet, and padding): letters, digits and
    /// `+ / = - _`.
    pub(crate) b64: u64,
}

impl Block {
    pub(crate) fn masks(self) -> Masks {
        Masks {
            alnum: self.alnum,
            phrase_lead: self.phrase_lead,
        }
    }

    pub(crate) fn fold_masks(self) -> FoldMasks {
        FoldMasks {
            alnum: self.alnum,
            leet: self.leet,
        }
    }

    /// The classes of the block's bytes from `by` on, as bits from 0 (`by` below 64).
    fn shifted(self, by: usize) -> Block {
        Block {
            alnum: self.alnum >> by,
            phrase_lead: self.phrase_lead >> by,
            leet: self.leet >> by,
            b64: self.b64 >> by,
        }
    }
}

/// The classes of every 64-byte block of `bytes`, in order.
pub(crate) fn text_classes(bytes: &[u8]) -> Vec<Block> {
    let mut blocks = Vec::new();
    classify_into(bytes, &mut blocks);
    blocks
}

/// [`text_classes`] into `blocks` (emptied first). Every text the second stage reads is
/// classified here, so on a CPU with AVX2 (asked once, then cached by the standard library) the
/// blocks are classified 32 bytes per operation; the tests hold both paths to the byte
/// definitions.
pub(crate) fn classify_into(bytes: &[u8], blocks: &mut Vec<Block>) {
    blocks.clear();
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        let whole = bytes.len() / 64 * 64;
        // SAFETY: the CPU has AVX2, just asked.
        #[expect(unsafe_code, reason = "calling the AVX2 path once AVX2 was detected")]
        blocks.extend(
            bytes[..whole]
                .chunks_exact(64)
                .map(|b| unsafe { avx2::block_classes(b) }),
        );
        if whole < bytes.len() {
            // A text's last block is short; padding it cost two copies (about a tenth of a
            // short text's classification). Past 64 bytes, its last 64 bytes are classified
            // instead, and the bits of the bytes read again (those before `whole`) shifted
            // out: what is left above is zero, as for padding.
            let from = bytes.len().saturating_sub(64);
            // SAFETY: as above.
            #[expect(unsafe_code, reason = "calling the AVX2 path once AVX2 was detected")]
            let last = unsafe { avx2::block_classes(&bytes[from..]) };
            blocks.push(last.shifted(whole - from));
        }
        return;
    }
    blocks.extend(bytes.chunks(64).map(block_classes));
}

/// The anchor search's fold of `bytes` (see `rules::fold_byte`: ASCII lowercased, each byte's
/// low nibble XORed into its high one, every other byte zero) into `out`, emptied first,
/// thirty-two bytes per operation, where the CPU has AVX2; `false` (and `out` untouched)
/// elsewhere, for the caller to fold the portable way. The rules' test of every byte value in
/// every position holds the two equal.
pub(crate) fn fold_for_anchors(bytes: &[u8], out: &mut Vec<u8>) -> bool {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, just asked.
        #[expect(unsafe_code, reason = "calling the AVX2 path once AVX2 was detected")]
        unsafe {
            avx2::fold_for_anchors(bytes, out);
        }
        return true;
    }
    let _ = (bytes, out);
    false
}

/// Whether `bytes`, whose blocks are `blocks`, hold a run of at least `min` (1 to 64)
/// consecutive base64 bytes. Each block's mask is read with the next one's above it, and a
/// bit survives the shifts when the `min` bits from it up are all set: a run starting in a
/// block ends at most 63 bits into the next.
pub(crate) fn has_b64_run(blocks: &[Block], min: usize) -> bool {
    let min = min.clamp(1, 64);
    blocks.iter().enumerate().any(|(i, block)| {
        let next = blocks.get(i + 1).map_or(0, |b| b.b64);
        let mut run = u128::from(block.b64) | (u128::from(next) << 64);
        // `run` bit j: bits j..j + covered all set.
        let mut covered = 1;
        while covered < min {
            let step = covered.min(min - covered);
            run &= run >> step;
            covered += step;
        }
        run as u64 != 0
    })
}

/// Bytes [`Seen`] tracks one by one: the single-byte anchors of the phrase rules (`<`, `|`).
pub(crate) const TRACKED: [u8; 2] = [b'<', b'|'];

/// Bytes [`Seen`] tracks together: the two ASCII bytes a CAS-L017 sequence may start with, ESC
/// and backspace (its third start byte, the C1 lead byte, is not ASCII).
pub(crate) const CONTROL: [u8; 2] = [0x1B, 0x08];

/// What a text holds of a few bytes rules search it for, found when the text is prepared, in
/// the pass that decides whether it is ASCII: bit `i` for `TRACKED[i]`, then one bit for either
/// [`CONTROL`] byte, one for any byte that is not ASCII. CAS-L017 and the single-byte anchors
/// each searched the whole text for their bytes, a call with its own set-up per text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Seen(u8);

impl Seen {
    const CONTROL: u8 = 1 << TRACKED.len();
    const NON_ASCII: u8 = Seen::CONTROL << 1;

    /// Whether the text holds a byte that is not ASCII.
    pub(crate) fn non_ascii(self) -> bool {
        self.0 & Seen::NON_ASCII != 0
    }

    /// Whether the text holds one of the [`CONTROL`] bytes.
    pub(crate) fn control(self) -> bool {
        self.0 & Seen::CONTROL != 0
    }

    /// Whether the text holds `b`, or `None` when `b` is not one of the [`TRACKED`] bytes.
    pub(crate) fn holds(self, b: u8) -> Option<bool> {
        let i = TRACKED.iter().position(|&t| t == b)?;
        Some(self.0 & (1 << i) != 0)
    }

    /// The plain way, one byte at a time: what the tests hold both paths to.
    #[cfg_attr(
        all(target_arch = "x86_64", not(test)),
        expect(
            dead_code,
            reason = "the portable path; x86-64 takes SSE2 (tests compare the two)"
        )
    )]
    fn of_bytes(bytes: &[u8]) -> Seen {
        let mut seen = 0u8;
        for &b in bytes {
            if !b.is_ascii() {
                seen |= Seen::NON_ASCII;
            }
            if CONTROL.contains(&b) {
                seen |= Seen::CONTROL;
            }
            for (i, &t) in TRACKED.iter().enumerate() {
                if b == t {
                    seen |= 1 << i;
                }
            }
        }
        Seen(seen)
    }
}

// The masks of one block of at most 64 bytes (`phrase_masks`, `fold_masks`, `block_classes`),
// and what a whole text holds (`seen`): SSE2 on x86-64, the portable code elsewhere.
#[cfg(not(target_arch = "x86_64"))]
pub(crate) use portable::{block_classes, fold_masks, phrase_masks};
#[cfg(target_arch = "x86_64")]
pub(crate) use sse2::{block_classes, fold_masks, phrase_masks, seen};

/// What a text holds of the tracked bytes (see [`Seen`]).
#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn seen(bytes: &[u8]) -> Seen {
    Seen::of_bytes(bytes)
}

/// The block masks eight bytes per integer operation, packed with a multiply: what targets
/// other than x86-64 use, and what the tests hold the SSE2 path to as well.
#[cfg_attr(
    all(target_arch = "x86_64", not(test)),
    expect(
        dead_code,
        reason = "the portable path; x86-64 takes SSE2 (tests compare the two)"
    )
)]
mod portable {
    use super::{Block, FoldMasks, HIGH, Masks, alnum, equal, letters_and_digits, load, pack};

    /// Every class of one block of at most 64 bytes.
    pub(crate) fn block_classes(block: &[u8]) -> Block {
        let (masks, fold) = (phrase_masks(block), fold_masks(block));
        let mut b64 = masks.alnum;
        for (k, eight) in block.chunks(8).enumerate() {
            let x = load(eight);
            let extra =
                equal(x, b'+') | equal(x, b'/') | equal(x, b'=') | equal(x, b'-') | equal(x, b'_');
            b64 |= pack(extra) << (8 * k);
        }
        Block {
            alnum: masks.alnum,
            phrase_lead: masks.phrase_lead,
            leet: fold.leet,
            b64,
        }
    }

    /// The masks of one block of at most 64 bytes.
    pub(crate) fn phrase_masks(block: &[u8]) -> Masks {
        let mut masks = Masks::default();
        for (k, eight) in block.chunks(8).enumerate() {
            let x = load(eight);
            let lead = equal(x, b'.') | equal(x, b'~') | equal(x, b'/') | (x & (x << 1) & HIGH);
            masks.alnum |= pack(alnum(x)) << (8 * k);
            masks.phrase_lead |= pack(lead) << (8 * k);
        }
        masks
    }

    /// The fold masks of one block of at most 64 bytes.
    pub(crate) fn fold_masks(block: &[u8]) -> FoldMasks {
        let mut masks = FoldMasks::default();
        for (k, eight) in block.chunks(8).enumerate() {
            let x = load(eight);
            let (letter, digit) = letters_and_digits(x);
            // Among the digits, 2, 6, 8 and 9 are not leetspeak: bit 3 set (8, 9), or bit 1
            // set with bit 0 clear (2, 6). Each bit is moved to its byte's high bit.
            let (bit3, bit1, bit0) = ((x << 4) & HIGH, (x << 6) & HIGH, (x << 7) & HIGH);
            let leet_digit = digit & !(bit3 | (bit1 & !bit0));
            let leet = leet_digit | equal(x, b'@') | equal(x, b'$');
            masks.alnum |= pack(letter | digit) << (8 * k);
            masks.leet |= pack(leet) << (8 * k);
        }
        masks
    }
}

/// The block masks sixteen bytes per operation, one `movemask` per mask, where the portable
/// code classifies eight bytes per operation and packs them with a multiply: the masks were a
/// sixth of the lint engine's instructions. SSE2 is part of every x86-64 CPU, so nothing is
/// detected at run time and the build needs no flag.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8,
        _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8, _mm_sub_epi8,
    };

    use super::{Block, CONTROL, FoldMasks, Masks, Seen, TRACKED};

    /// `f` of the block as 64 bytes, zero-padded past the end of a shorter one (a zero byte is
    /// in none of the classes).
    fn whole<T>(block: &[u8], f: impl FnOnce(&[u8; 64]) -> T) -> T {
        match block.first_chunk::<64>() {
            Some(full) => f(full),
            None => {
                let mut padded = [0u8; 64];
                let n = block.len().min(64);
                padded[..n].copy_from_slice(&block[..n]);
                f(&padded)
            }
        }
    }

    /// The masks of one block of at most 64 bytes.
    pub(crate) fn phrase_masks(block: &[u8]) -> Masks {
        let [alnum, phrase_lead, _, _] = whole(block, classify::<true, false, false>);
        Masks { alnum, phrase_lead }
    }

    /// The fold masks of one block of at most 64 bytes.
    pub(crate) fn fold_masks(block: &[u8]) -> FoldMasks {
        let [alnum, _, leet, _] = whole(block, classify::<false, true, false>);
        FoldMasks { alnum, leet }
    }

    /// Every class of one block of at most 64 bytes.
    pub(crate) fn block_classes(block: &[u8]) -> Block {
        let [alnum, phrase_lead, leet, b64] = whole(block, classify::<true, true, true>);
        Block {
            alnum,
            phrase_lead,
            leet,
            b64,
        }
    }

    /// The block's masks of ASCII letters and digits, of phrase leads (when `LEAD`), of
    /// leetspeak characters (when `LEET`) and of base64 bytes (when `B64`); a mask not asked
    /// for is zero.
    #[expect(
        unsafe_code,
        reason = "SSE2 intrinsics: unaligned loads of sixteen bytes from a chunk of exactly sixteen"
    )]
    fn classify<const LEAD: bool, const LEET: bool, const B64: bool>(b: &[u8; 64]) -> [u64; 4] {
        let mut masks = [0u64; 4];
        for (k, chunk) in b.chunks_exact(16).enumerate() {
            // SAFETY: SSE2 is enabled on every x86-64 target; the load reads the sixteen bytes
            // of `chunk`, which has sixteen. One block for all of it: on compilers where the
            // compares are safe to call, the load still needs it.
            let found = unsafe {
                let v = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
                let is = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
                let any = |cs: &[u8]| {
                    cs.iter()
                        .fold(_mm_set1_epi8(0), |acc, &c| _mm_or_si128(acc, is(c)))
                };
                // `lo..=hi` as unsigned bytes: `v - lo` is at most `hi - lo`.
                let within = |v: __m128i, lo: u8, hi: u8| {
                    let d = _mm_sub_epi8(v, _mm_set1_epi8(lo as i8));
                    _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8((hi - lo) as i8)), d)
                };
                let letter = within(_mm_or_si128(v, _mm_set1_epi8(0x20)), b'a', b'z');
                let digit = within(v, b'0', b'9');
                let alnum = _mm_or_si128(letter, digit);
                let lead = if LEAD {
                    // 0xC0 and above: `max(v, 0xC0)` is `v`.
                    let high = _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(0xC0_u8 as i8)), v);
                    _mm_or_si128(any(b".~/"), high)
                } else {
                    _mm_set1_epi8(0)
                };
                let leet = if LEET {
                    // The leetspeak digits from the digits, as the portable code reads them:
                    // with bits 0, 1 and 3 kept, 0 1 3 4 5 7 are at most 3 and not 2 (2 and 6
                    // keep 2, 8 and 9 keep 8 and 9). Six operations where a compare per digit
                    // took twelve.
                    let t = _mm_and_si128(v, _mm_set1_epi8(0x0B));
                    let small = _mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8(3)), t);
                    let two = _mm_cmpeq_epi8(t, _mm_set1_epi8(2));
                    let leet_digit = _mm_andnot_si128(two, _mm_and_si128(digit, small));
                    _mm_or_si128(leet_digit, any(b"@$"))
                } else {
                    _mm_set1_epi8(0)
                };
                let b64 = if B64 {
                    _mm_or_si128(alnum, any(b"+/=-_"))
                } else {
                    _mm_set1_epi8(0)
                };
                [alnum, lead, leet, b64].map(|m| _mm_movemask_epi8(m))
            };
            for (mask, bits16) in masks.iter_mut().zip(found) {
                *mask |= bits(bits16) << (16 * k);
            }
        }
        masks
    }

    /// The sixteen bits of a `movemask`.
    fn bits(movemask: i32) -> u64 {
        u64::from(movemask as u16)
    }

    /// What `bytes` holds of the tracked bytes: per sixteen bytes one compare and one `or`
    /// per tracked byte, and the masks read once at the end.
    #[expect(
        unsafe_code,
        reason = "SSE2 intrinsics: unaligned loads of sixteen bytes from a chunk of exactly sixteen"
    )]
    pub(crate) fn seen(bytes: &[u8]) -> Seen {
        let mut chunks = bytes.chunks_exact(16);
        let rest = chunks.remainder();
        // What a text holds does not change when a byte is read twice: past sixteen bytes,
        // the last sixteen are read again instead of a padded copy of the rest (a copy and
        // a fill for every text).
        let mut padded = [0u8; 16];
        let last: &[u8; 16] = match bytes.len().checked_sub(16) {
            Some(from) => bytes[from..].first_chunk().unwrap_or(&padded),
            None => {
                padded[..rest.len()].copy_from_slice(rest);
                &padded
            }
        };
        // SAFETY: SSE2 is enabled on every x86-64 target; each load reads the sixteen bytes
        // of a chunk (or of `last`), which has sixteen. A zero byte is none of the tracked
        // ones and is ASCII, so the padding adds nothing.
        let masks = unsafe {
            let mut high = _mm_set1_epi8(0);
            let mut control = _mm_set1_epi8(0);
            let mut found = [_mm_set1_epi8(0); TRACKED.len()];
            let mut add = |chunk: &[u8]| {
                let v = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
                high = _mm_or_si128(high, v);
                for c in CONTROL {
                    control = _mm_or_si128(control, _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8)));
                }
                for (acc, &t) in found.iter_mut().zip(&TRACKED) {
                    *acc = _mm_or_si128(*acc, _mm_cmpeq_epi8(v, _mm_set1_epi8(t as i8)));
                }
            };
            for chunk in &mut chunks {
                add(chunk);
            }
            add(last);
            let mut masks = [0i32; TRACKED.len() + 2];
            for (mask, acc) in masks.iter_mut().zip(found.iter().chain([&control, &high])) {
                *mask = _mm_movemask_epi8(*acc);
            }
            masks
        };
        let mut seen = 0u8;
        for (i, mask) in masks.iter().enumerate() {
            if *mask != 0 {
                seen |= 1 << i;
            }
        }
        Seen(seen)
    }
}

/// [`sse2`]'s classification of whole blocks, thirty-two bytes per operation. Only
/// [`classify_into`] calls it, once the CPU was found to have AVX2.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_and_si256, _mm256_andnot_si256, _mm256_cmpeq_epi8, _mm256_cmpgt_epi8,
        _mm256_loadu_si256, _mm256_max_epu8, _mm256_min_epu8, _mm256_movemask_epi8,
        _mm256_or_si256, _mm256_set1_epi8, _mm256_setzero_si256, _mm256_slli_epi16,
        _mm256_storeu_si256, _mm256_sub_epi8, _mm256_xor_si256,
    };

    use super::Block;

    /// Every class of one block of at most 64 bytes, as `sse2::classify` works them out (the
    /// same operations, on twice the bytes).
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 (`is_x86_feature_detected!("avx2")`).
    #[target_feature(enable = "avx2")]
    #[expect(
        unsafe_code,
        reason = "AVX2 intrinsics: unaligned loads of thirty-two bytes from a chunk of exactly thirty-two"
    )]
    pub(super) unsafe fn block_classes(block: &[u8]) -> Block {
        // The padding of `sse2::whole`, written out: given through a closure, the
        // classification was no longer compiled as AVX2 code and cost eight times as much.
        let mut padded = [0u8; 64];
        let b = match block.first_chunk::<64>() {
            Some(full) => full,
            None => {
                // A zero byte is in none of the classes.
                let n = block.len().min(64);
                padded[..n].copy_from_slice(&block[..n]);
                &padded
            }
        };
        let mut masks = [0u64; 4];
        for (k, chunk) in b.chunks_exact(32).enumerate() {
            // SAFETY: the load reads the thirty-two bytes of `chunk`, which has thirty-two; the
            // caller vouches for AVX2.
            let found = unsafe {
                let v = _mm256_loadu_si256(chunk.as_ptr().cast::<__m256i>());
                let splat = |c: u8| _mm256_set1_epi8(c as i8);
                let any = |cs: &[u8]| {
                    cs.iter().fold(_mm256_setzero_si256(), |acc, &c| {
                        _mm256_or_si256(acc, _mm256_cmpeq_epi8(v, splat(c)))
                    })
                };
                let within = |v: __m256i, lo: u8, hi: u8| {
                    let d = _mm256_sub_epi8(v, splat(lo));
                    _mm256_cmpeq_epi8(_mm256_min_epu8(d, splat(hi - lo)), d)
                };
                let letter = within(_mm256_or_si256(v, splat(0x20)), b'a', b'z');
                let digit = within(v, b'0', b'9');
                let alnum = _mm256_or_si256(letter, digit);
                let high = _mm256_cmpeq_epi8(_mm256_max_epu8(v, splat(0xC0)), v);
                let lead = _mm256_or_si256(any(b".~/"), high);
                let t = _mm256_and_si256(v, splat(0x0B));
                let small = _mm256_cmpeq_epi8(_mm256_min_epu8(t, splat(3)), t);
                let two = _mm256_cmpeq_epi8(t, splat(2));
                let leet_digit = _mm256_andnot_si256(two, _mm256_and_si256(digit, small));
                let leet = _mm256_or_si256(leet_digit, any(b"@$"));
                let b64 = _mm256_or_si256(alnum, any(b"+/=-_"));
                [alnum, lead, leet, b64].map(|m| _mm256_movemask_epi8(m))
            };
            for (mask, bits32) in masks.iter_mut().zip(found) {
                *mask |= u64::from(bits32 as u32) << (32 * k);
            }
        }
        let [alnum, phrase_lead, leet, b64] = masks;
        Block {
            alnum,
            phrase_lead,
            leet,
            b64,
        }
    }

    /// [`super::fold_for_anchors`], on a CPU with AVX2.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 (`is_x86_feature_detected!("avx2")`).
    #[target_feature(enable = "avx2")]
    #[expect(
        unsafe_code,
        reason = "compiled for AVX2: its callers vouch that the CPU has it"
    )]
    pub(super) unsafe fn fold_for_anchors(bytes: &[u8], out: &mut Vec<u8>) {
        out.clear();
        // Appended a fixed thirty-two bytes at a time: resizing the buffer first filled it
        // with zeros that were all overwritten (a tenth of the copy's cost).
        out.reserve(bytes.len());
        let mut ins = bytes.chunks_exact(32);
        for chunk in &mut ins {
            if let Some(chunk) = chunk.first_chunk::<32>() {
                out.extend_from_slice(&fold_array(chunk));
            }
        }
        let rest = ins.remainder();
        if rest.is_empty() {
            return;
        }
        match bytes.len().checked_sub(32) {
            // Past 32 bytes, the last 32 are folded again and written over the end of what is
            // written (each byte is folded alone, so the overlap gets the same values):
            // padding the tail cost two copies a text.
            Some(from) => {
                if let Some(last) = bytes.get(from..).and_then(<[u8]>::first_chunk::<32>) {
                    out.truncate(from);
                    out.extend_from_slice(&fold_array(last));
                }
            }
            None => {
                let mut padded = [0u8; 32];
                if let Some(head) = padded.get_mut(..rest.len()) {
                    head.copy_from_slice(rest);
                }
                let folded = fold_array(&padded);
                out.extend_from_slice(folded.get(..rest.len()).unwrap_or_default());
            }
        }
    }

    /// Thirty-two bytes folded (see [`fold`]).
    #[target_feature(enable = "avx2")]
    #[expect(
        unsafe_code,
        reason = "AVX2 intrinsics: a load and a store of thirty-two bytes from and to arrays of thirty-two"
    )]
    fn fold_array(bytes: &[u8; 32]) -> [u8; 32] {
        let mut out = [0u8; 32];
        // SAFETY: both arrays have thirty-two bytes; AVX2 is enabled for this function.
        unsafe {
            let v = _mm256_loadu_si256(bytes.as_ptr().cast::<__m256i>());
            _mm256_storeu_si256(out.as_mut_ptr().cast::<__m256i>(), fold(v));
        }
        out
    }

    /// Thirty-two bytes folded as `rules::fold_byte` folds one.
    #[target_feature(enable = "avx2")]
    fn fold(v: __m256i) -> __m256i {
        let splat = |c: u8| _mm256_set1_epi8(c as i8);
        let d = _mm256_sub_epi8(v, splat(b'A'));
        let upper = _mm256_cmpeq_epi8(_mm256_min_epu8(d, splat(b'Z' - b'A')), d);
        let lower = _mm256_or_si256(v, _mm256_and_si256(upper, splat(0x20)));
        // Shifted as sixteen-bit lanes, so the bits that crossed into the next byte are cut.
        let shifted = _mm256_and_si256(_mm256_slli_epi16::<4>(lower), splat(0xF0));
        // ASCII bytes are the non-negative ones read as signed.
        let ascii = _mm256_cmpgt_epi8(v, _mm256_set1_epi8(-1));
        _mm256_and_si256(_mm256_xor_si256(lower, shifted), ascii)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte value in every lane, next to varied neighbours.
    fn blocks() -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for lane in 0..8 {
            for b in 0..=255u8 {
                let mut block: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37) ^ b).collect();
                block[lane] = b;
                block[lane + 56] = b;
                out.push(block.clone());
                out.push(block[..lane + 1].to_vec());
            }
        }
        out
    }

    /// Whether a byte may be part of a base64 run, by definition.
    fn is_b64(c: u8) -> bool {
        c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=' | b'-' | b'_')
    }

    /// Every class of a block, one byte at a time.
    fn want_block(block: &[u8]) -> Block {
        let mut want = Block::default();
        for (i, &c) in block.iter().enumerate() {
            want.alnum |= u64::from(c.is_ascii_alphanumeric()) << i;
            want.phrase_lead |= u64::from(matches!(c, b'.' | b'~' | b'/') || c >= 0xC0) << i;
            want.leet |= u64::from(matches!(
                c,
                b'0' | b'1' | b'3' | b'4' | b'5' | b'7' | b'@' | b'$'
            )) << i;
            want.b64 |= u64::from(is_b64(c)) << i;
        }
        want
    }

    #[test]
    fn block_masks_match_the_byte_definitions() {
        for block in blocks() {
            let want = want_block(&block);
            assert_eq!(block_classes(&block), want, "{block:?}");
            assert_eq!(portable::block_classes(&block), want, "{block:?}");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2, just asked.
                #[expect(unsafe_code, reason = "testing the AVX2 path where the CPU has it")]
                let classes = unsafe { avx2::block_classes(&block) };
                assert_eq!(classes, want, "{block:?}");
            }
            assert_eq!(phrase_masks(&block), want.masks(), "{block:?}");
            assert_eq!(portable::phrase_masks(&block), want.masks(), "{block:?}");
            assert_eq!(fold_masks(&block), want.fold_masks(), "{block:?}");
            assert_eq!(portable::fold_masks(&block), want.fold_masks(), "{block:?}");
        }
    }

    /// A whole text's classes, the last block's included (read overlapping the block before
    /// it where the text is longer than a block), are each block's byte definitions, at every
    /// length and alignment.
    #[test]
    fn text_classes_match_the_byte_definitions_at_every_length() {
        let bytes: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
        for start in [0, 1, 31, 63] {
            for len in 0..bytes.len() - start {
                let text = &bytes[start..start + len];
                let want: Vec<Block> = text.chunks(64).map(want_block).collect();
                assert_eq!(text_classes(text), want, "{start} {len}");
            }
        }
    }

    /// The longest run of base64 bytes, one byte at a time.
    fn longest_b64_run(bytes: &[u8]) -> usize {
        let (mut longest, mut run) = (0, 0);
        for &c in bytes {
            run = if is_b64(c) { run + 1 } else { 0 };
            longest = longest.max(run);
        }
        longest
    }

    proptest::proptest! {
        /// A run is found exactly when one of at least that length is there, wherever it
        /// falls across blocks.
        #[test]
        fn b64_runs_are_found_by_their_length(
            text in proptest::collection::vec(
                proptest::sample::select(b"aZ9+/=-_ .%\xc3".to_vec()),
                0..300,
            ),
            min in 1usize..=64,
        ) {
            let blocks = text_classes(&text);
            proptest::prop_assert_eq!(has_b64_run(&blocks, min), longest_b64_run(&text) >= min);
        }
    }

    #[test]
    fn seen_matches_the_byte_definition() {
        for block in blocks() {
            for from in [0, 1, 7, 9, 17, 33] {
                let tail = block.get(from..).unwrap_or_default();
                let want = Seen::of_bytes(tail);
                assert_eq!(seen(tail), want, "{tail:?}");
                assert_eq!(want.non_ascii(), !tail.is_ascii());
                assert_eq!(want.control(), tail.iter().any(|b| CONTROL.contains(b)));
                for t in TRACKED {
                    assert_eq!(want.holds(t), Some(tail.contains(&t)), "{t} {tail:?}");
                }
            }
        }
        // Every tracked byte alone, at every offset of a text longer than one load.
        for t in TRACKED.into_iter().chain(CONTROL).chain([0x80, 0xC2, 0xFF]) {
            for at in 0..40 {
                let mut text = vec![b'a'; 40];
                text[at] = t;
                assert_eq!(seen(&text), Seen::of_bytes(&text), "{t} at {at}");
                assert_ne!(seen(&text), Seen::default(), "{t} at {at}");
            }
        }
        assert_eq!(Seen::default().holds(b'a'), None);
    }

    #[test]
    fn first_non_ascii_matches_the_byte_definition() {
        for block in blocks() {
            for from in [0, 1, 7, 9] {
                let tail = block.get(from..).unwrap_or_default();
                assert_eq!(
                    first_non_ascii(tail),
                    tail.iter().position(|b| !b.is_ascii()),
                    "{tail:?}"
                );
            }
        }
    }

    #[test]
    fn load_reads_the_first_eight_bytes_of_any_slice() {
        let bytes: Vec<u8> = (1..=20).collect();
        for len in 0..=bytes.len() {
            let mut want = [0u8; 8];
            let n = len.min(8);
            want[..n].copy_from_slice(&bytes[..n]);
            assert_eq!(load(&bytes[..len]), u64::from_le_bytes(want), "{len}");
        }
    }

    #[test]
    fn lowercase_matches_the_byte_definition() {
        for block in blocks() {
            for eight in block.chunks(8) {
                let want: Vec<u8> = eight.iter().map(u8::to_ascii_lowercase).collect();
                assert_eq!(ascii_lowercase(load(eight)), load(&want), "{eight:?}");
            }
        }
    }
}
