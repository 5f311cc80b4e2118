//! Key context: which JSON keys make the value under them a secret whatever its shape.
//!
//! A key is sensitive when it contains one of a few words (matched unanchored and ASCII
//! case-insensitively on purpose: `accessToken`, `X-Api-Key` and `refresh_token` are all caught,
//! at the price of `password_policy`), when one of its segments is `pin` (segments, because the
//! bare substring would also hit `shipping` and `spinner`), or when the user's config names the
//! whole key or one of its segments.
//!
//! Under a sensitive key, a string of at least 8 UTF-16 units and a number whose decimal text has
//! at least 8 digits are secrets, except: our own placeholders, values the config allows, and
//! public OAuth/OIDC discovery endpoints (RFC 8414), which are plain http(s) URLs that servers
//! legitimately publish under names containing `token` and `authorization`.

use std::collections::HashSet;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, Input, MatchKind, Span, packed};

use super::placeholder::{placeholder_spans, utf16_len};

/// Words that make a key sensitive wherever they appear in it (compared ASCII-lowercased).
const SENSITIVE_WORDS: [&str; 9] = [
    "token",
    "secret",
    "password",
    "passwd",
    "api_key",
    "api-key",
    "apikey",
    "authorization",
    "credential",
];

/// The one key whose name holds a sensitive word but whose value never is a secret.
const PROGRESS_TOKEN: &str = "progressToken";

/// Names that are only sensitive as a whole segment: as substrings they are inside ordinary words.
const SEGMENT_WORDS: [&str; 3] = ["pin", "auth", "pass"];

/// OAuth/OIDC discovery fields whose values are public endpoint URLs.
const DISCOVERY_KEYS: [&str; 10] = [
    "token_endpoint",
    "authorization_endpoint",
    "revocation_endpoint",
    "registration_endpoint",
    "introspection_endpoint",
    "userinfo_endpoint",
    "jwks_uri",
    "token_endpoint_auth_methods_supported",
    "revocation_endpoint_auth_methods_supported",
    "introspection_endpoint_auth_methods_supported",
];

/// Shortest string (in UTF-16 units) or number (in digits) taken as a secret under a sensitive key.
pub(crate) const MIN_SECRET_LEN: usize = 8;

/// What the key a value sits under says about it. Arrays hand their key on to their elements.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct KeyCtx {
    /// The value is under a sensitive key.
    pub sensitive: bool,
    /// The key is an OAuth discovery field (only meaningful when sensitive).
    pub discovery: bool,
    /// Sensitive for its own scalars (and an array's), but objects below do not inherit it: a
    /// key that names a field in a JSON Schema `properties` map (`maxTokens`, `password`) holds
    /// that field's schema, whose `description` is not a secret.
    pub shallow: bool,
}

impl KeyCtx {
    pub(crate) const NONE: KeyCtx = KeyCtx {
        sensitive: false,
        discovery: false,
        shallow: false,
    };

    /// The context of a member whose own key gave `self`, inside an object held under
    /// `parent`: everything under a sensitive key is context for redaction, however deep
    /// (`credentials: {"user": …, "pass": …}`), not only its direct values.
    pub(crate) fn within(self, parent: KeyCtx) -> KeyCtx {
        if self.sensitive || !parent.sensitive || parent.shallow {
            self
        } else {
            KeyCtx {
                sensitive: true,
                discovery: false,
                shallow: false,
            }
        }
    }

    /// The context of a member of a JSON Schema map (`properties`, …): see [`KeyCtx::shallow`].
    pub(crate) fn in_schema_map(self) -> KeyCtx {
        KeyCtx {
            shallow: self.sensitive,
            ..self
        }
    }
}

/// Keys whose object maps field names to schemas (JSON Schema), not names to values.
const SCHEMA_MAPS: [&str; 4] = ["properties", "patternProperties", "$defs", "definitions"];

/// Whether an object held under `key` is a JSON Schema map of field names to schemas.
pub(crate) fn is_schema_map(key: &str) -> bool {
    SCHEMA_MAPS.contains(&key)
}

/// Classifies keys. Holds the user's extra key names (already lowercased).
#[derive(Debug, Clone, Default)]
pub(crate) struct KeyRules {
    extra: HashSet<String>,
}

/// JavaScript's `\s`: Unicode White_Space minus U+0085, plus U+FEFF.
pub(crate) fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// `cardPin_code` → `card`, `pin`, `code`: split where a lowercase letter or digit meets an
/// uppercase ASCII letter, and on runs of whitespace, `_`, `.` and `-`; lowercased.
pub(crate) fn segments(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut prev: Option<char> = None;
    for c in key.chars() {
        let separator = c == '_' || c == '.' || c == '-' || is_js_space(c);
        if separator {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current).to_lowercase());
            }
        } else {
            let camel_break = prev.is_some_and(|p| {
                (p.is_ascii_lowercase() || p.is_ascii_digit()) && c.is_ascii_uppercase()
            });
            if camel_break && !current.is_empty() {
                out.push(std::mem::take(&mut current).to_lowercase());
            }
            current.push(c);
        }
        prev = Some(c);
    }
    if !current.is_empty() {
        out.push(current.to_lowercase());
    }
    out
}

impl KeyRules {
    pub(crate) fn new(extra: impl IntoIterator<Item = String>) -> KeyRules {
        KeyRules {
            extra: extra.into_iter().collect(),
        }
    }

    pub(crate) fn has_extra(&self) -> bool {
        !self.extra.is_empty()
    }

    /// The context a member's value gets from its key.
    pub(crate) fn classify(&self, key: &str) -> KeyCtx {
        if !self.is_sensitive(key) {
            return KeyCtx::NONE;
        }
        let discovery = key.len() <= 64 && {
            let lower = key.to_lowercase();
            DISCOVERY_KEYS.contains(&lower.as_str())
        };
        KeyCtx {
            sensitive: true,
            discovery,
            shallow: false,
        }
    }

    /// Whether these are the built-in rules alone, with no configured key.
    pub(crate) fn is_builtin(&self) -> bool {
        self.extra.is_empty()
    }

    pub(crate) fn is_sensitive(&self, key: &str) -> bool {
        if self.extra.is_empty() && !may_hold_word(key.as_bytes()) {
            return false;
        }
        // A key a pattern already rewrote is judged without its placeholders: a user rule named
        // `password` puts that word into every key it touches, and a second pass would then
        // take the member's value as a password (docs/redaction.md, "Redacting twice changes
        // nothing").
        let spans = placeholder_spans(key);
        if !spans.is_empty() {
            let mut plain = String::with_capacity(key.len());
            let mut last = 0;
            for span in spans {
                plain.push_str(&key[last..span.start]);
                last = span.end;
            }
            plain.push_str(&key[last..]);
            return self.is_sensitive(&plain);
        }
        // MCP's `progressToken` is a correlation id the client picks (the SDKs use the request
        // id), not a credential; redacting it cut replayed progress off from its request. A
        // config that names it in `keys` still gets it redacted.
        if key == PROGRESS_TOKEN && !self.extra.iter().any(|k| k.eq_ignore_ascii_case(key)) {
            return false;
        }
        // The built-in words are matched the way the reference's case-insensitive (non-Unicode)
        // regex does: ASCII letters only.
        let mut lower = [0u8; 64];
        let bytes = key.as_bytes();
        let owned;
        let lowered: &[u8] = if bytes.len() <= lower.len() {
            for (dst, src) in lower.iter_mut().zip(bytes) {
                *dst = src.to_ascii_lowercase();
            }
            &lower[..bytes.len()]
        } else {
            owned = key.to_ascii_lowercase().into_bytes();
            &owned
        };
        if SENSITIVE_WORDS
            .iter()
            .any(|w| contains_bytes(lowered, w.as_bytes()))
        {
            return true;
        }
        let maybe_segment = SEGMENT_WORDS
            .iter()
            .any(|w| contains_bytes(lowered, w.as_bytes()));
        if !maybe_segment && self.extra.is_empty() {
            return false;
        }
        if !self.extra.is_empty() && self.extra.contains(&key.to_lowercase()) {
            return true;
        }
        segments(key)
            .iter()
            .any(|s| SEGMENT_WORDS.contains(&s.as_str()) || self.extra.contains(s))
    }
}

/// First three letters of every built-in word (`pas` covers password and passwd, `api` the three
/// api-key spellings), packed: a key with none of them is not sensitive, and most keys are
/// rejected in one pass over their bytes.
const TRIGRAM_WORDS: [&[u8; 3]; 7] = [b"tok", b"sec", b"pas", b"api", b"aut", b"cre", b"pin"];

const TRIGRAMS: [u32; 7] = {
    let mut out = [0; 7];
    let mut i = 0;
    while i < out.len() {
        out[i] = trigram(TRIGRAM_WORDS[i]);
        i += 1;
    }
    out
};

/// Where the first of [`TRIGRAM_WORDS`] at or after byte `from` of `text` starts, ASCII case
/// ignored. Without configured keys, [`KeyRules::is_sensitive`] turns down every key holding
/// none of them, so a search for a sensitive name in free text can start near this place.
pub(crate) fn next_trigram(text: &str, from: usize) -> Option<usize> {
    if from > text.len() {
        return None;
    }
    match &*TRIGRAM_SEARCH {
        Some(searcher) => searcher
            .find_in(text.as_bytes(), Span::from(from..text.len()))
            .map(|m| m.start()),
        None => next_trigram_automaton(text, from),
    }
}

/// Every spelling of [`TRIGRAM_WORDS`] in upper and lower case (eight a word), in one packed
/// (Teddy) search where the CPU has one. The words are all three bytes long, so the leftmost
/// match is the leftmost start, as the case-blind automaton reports it. The automaton alone
/// walked every byte through its state table, twenty instructions a byte, and a recorder
/// screens every frame with this search (docs/benchmarks.md, record --http).
static TRIGRAM_SEARCH: LazyLock<Option<packed::Searcher>> =
    LazyLock::new(|| trigram_searcher(|_| true));

/// The spellings of [`TRIGRAM_WORDS`] whose case pattern (bit `i` set: byte `i` in upper case)
/// `keep` accepts, in one packed search.
fn trigram_searcher(keep: impl Fn(u8) -> bool) -> Option<packed::Searcher> {
    let mut config = packed::Config::new();
    config.match_kind(packed::MatchKind::LeftmostFirst);
    let mut builder = config.builder();
    for word in TRIGRAM_WORDS {
        for case in (0..8u8).filter(|c| keep(*c)) {
            let spelling: Vec<u8> = word
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    if case >> i & 1 == 1 {
                        b.to_ascii_uppercase()
                    } else {
                        *b
                    }
                })
                .collect();
            builder.add(spelling);
        }
    }
    builder.build()
}

/// Whether `text` holds any of [`TRIGRAM_WORDS`], ASCII case ignored: whether
/// [`next_trigram`] finds one from its start. Asked of every frame a recorder captures
/// (`Inner::json_may_change`), so it is answered by two packed searches of 28 spellings each
/// (first letter in lower case, then in upper case): the narrow kind of Teddy, which reads
/// twice the bytes per step that the wide kind all 56 spellings need, about half the
/// instructions on a short frame with both searches counted (docs/benchmarks.md). Only for a
/// yes or no: asked for the next match from one offset after another, as the redaction rules
/// ask, the half without a match would read to the end each time.
pub(crate) fn has_trigram(text: &str) -> bool {
    static HALVES: LazyLock<Option<[packed::Searcher; 2]>> = LazyLock::new(|| {
        Some([
            trigram_searcher(|case| case & 1 == 0)?,
            trigram_searcher(|case| case & 1 == 1)?,
        ])
    });
    match &*HALVES {
        Some(halves) => halves.iter().any(|s| s.find(text.as_bytes()).is_some()),
        None => next_trigram(text, 0).is_some(),
    }
}

/// [`next_trigram`] by the case-blind automaton: where no packed search is available, and the
/// plain way the tests hold the packed search to.
fn next_trigram_automaton(text: &str, from: usize) -> Option<usize> {
    static FINDER: LazyLock<AhoCorasick> = LazyLock::new(|| {
        match AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostFirst)
            .build(TRIGRAM_WORDS)
        {
            Ok(ac) => ac,
            Err(e) => panic!("key trigrams do not compile: {e}"),
        }
    });
    FINDER
        .find(Input::new(text).range(from..))
        .map(|m| m.start())
}

const fn trigram(b: &[u8; 3]) -> u32 {
    (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32
}

fn may_hold_word(key: &[u8]) -> bool {
    if key.len() < 3 {
        return false;
    }
    let mut window = trigram(&[0, key[0].to_ascii_lowercase(), key[1].to_ascii_lowercase()]);
    for &b in &key[2..] {
        window = (window << 8 | u32::from(b.to_ascii_lowercase())) & 0x00FF_FFFF;
        if TRIGRAMS.contains(&window) {
            return true;
        }
    }
    false
}

fn contains_bytes(haystack: &[u8], needle: &[u8]) -> bool {
    needle.len() <= haystack.len() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// Whether a string under a sensitive key is a secret.
///
/// Its length is counted outside any placeholder it holds: a short value whose secret part a
/// pattern already replaced (`" A:0"` → `" [REDACTED:word:…]"`) must not become long enough for
/// the whole value to be taken on a second pass, or redaction would not be idempotent. The
/// reference counts the whole string and re-redacts such values.
pub(crate) fn is_string_secret(ctx: KeyCtx, value: &str, allow: &HashSet<String>) -> bool {
    ctx.sensitive
        && value.len() >= MIN_SECRET_LEN
        && unredacted_len(value) >= MIN_SECRET_LEN
        && !allow.contains(value)
        && !(ctx.discovery && is_plain_http_url(value))
}

/// Length in UTF-16 code units of what lies outside the placeholders in `value`.
fn unredacted_len(value: &str) -> usize {
    let spans = placeholder_spans(value);
    let mut at = 0;
    let mut len = 0;
    for span in spans.iter().chain([&(value.len()..value.len())]) {
        len += utf16_len(&value[at..span.start]);
        at = span.end;
    }
    len
}

/// The decimal text a number under a sensitive key is hashed from: JavaScript's `String(n)`, except
/// that integers beyond 2^53 are spelled out in full rather than in exponent form. `None` for a
/// number that is not finite.
pub(crate) fn numeric_text(n: f64) -> Option<String> {
    if !n.is_finite() {
        return None;
    }
    const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
    if n.fract() == 0.0 && n.abs() > MAX_SAFE {
        // Rust prints the exact decimal value of the double, as BigInt(n).toString() does.
        return Some(format!("{n:.0}"));
    }
    Some(crate::json::js_number(n))
}

/// The secret text of a number under a sensitive key, when it is one.
pub(crate) fn numeric_secret(ctx: KeyCtx, n: f64, allow: &HashSet<String>) -> Option<String> {
    if !ctx.sensitive {
        return None;
    }
    let text = numeric_text(n)?;
    let digits = text.bytes().filter(u8::is_ascii_digit).count();
    (digits >= MIN_SECRET_LEN && !allow.contains(&text)).then_some(text)
}

/// An absolute `http:`/`https:` URL with no query string and no username or password, judged the
/// way a WHATWG URL parser would (leniently about slashes and case, strictly about the host).
pub(crate) fn is_plain_http_url(value: &str) -> bool {
    let trimmed = value.trim_matches(|c: char| c <= ' ');
    let cleaned: String;
    let text = if trimmed.contains(['\t', '\n', '\r']) {
        cleaned = trimmed
            .chars()
            .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
            .collect();
        cleaned.as_str()
    } else {
        trimmed
    };
    let Some(colon) = text.find(':') else {
        return false;
    };
    let scheme = &text[..colon];
    if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
        return false;
    }
    let rest = text[colon + 1..].trim_start_matches(['/', '\\']);
    let end = rest.find(['/', '\\', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let host_port = match authority.rfind('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            if !(userinfo.is_empty() || userinfo == ":") {
                // A username or a password, however short, is a credential in the URL.
                return false;
            }
            &authority[at + 1..]
        }
        None => authority,
    };
    if !valid_host_port(host_port) {
        return false;
    }
    let before_fragment = tail.split('#').next().unwrap_or("");
    match before_fragment.find('?') {
        Some(q) => before_fragment[q + 1..].is_empty(),
        None => true,
    }
}

fn valid_host_port(host_port: &str) -> bool {
    let (host, port) = if let Some(inner) = host_port.strip_prefix('[') {
        let Some(close) = inner.find(']') else {
            return false;
        };
        let v6 = &inner[..close];
        if v6.is_empty()
            || !v6
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
        {
            return false;
        }
        let after = &inner[close + 1..];
        match after.strip_prefix(':') {
            Some(p) => ("v6", p),
            None if after.is_empty() => ("v6", ""),
            None => return false,
        }
    } else {
        match host_port.rfind(':') {
            Some(c) => (&host_port[..c], &host_port[c + 1..]),
            None => (host_port, ""),
        }
    };
    if host.is_empty() {
        return false;
    }
    let port_ok = port.is_empty()
        || (port.bytes().all(|b| b.is_ascii_digit())
            && port.parse::<u32>().is_ok_and(|p| p <= 65535));
    if !port_ok {
        return false;
    }
    !host.chars().any(|c| {
        c <= ' '
            || c == '\u{7f}'
            || matches!(
                c,
                '#' | '%' | '/' | ':' | '<' | '>' | '?' | '@' | '[' | '\\' | ']' | '^' | '|'
            )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> KeyRules {
        KeyRules::default()
    }

    proptest::proptest! {
        /// The packed search finds what the case-blind automaton finds, from any byte.
        #[test]
        fn the_packed_trigram_search_is_the_automaton(
            text in "([tTsSpPaAcC][oOeEaApPuUrRiI]?[kKcCsSiItTeEnN]?|[ -~]|\\PC){0,40}",
            from in 0usize..200,
        ) {
            let from = from.min(text.len());
            proptest::prop_assert_eq!(next_trigram(&text, from), next_trigram_automaton(&text, from));
        }
    }

    proptest::proptest! {
        /// The two-search yes-or-no answers as the case-blind automaton does.
        #[test]
        fn the_trigram_screen_is_the_automaton(
            text in "([tTsSpPaAcC][oOeEaApPuUrRiI]?[kKcCsSiItTeEnN]?|[ -~]|\\PC){0,40}",
        ) {
            proptest::prop_assert_eq!(has_trigram(&text), next_trigram_automaton(&text, 0).is_some());
        }
    }

    #[test]
    fn the_trigram_search_sees_every_case() {
        for text in ["a progressToken", "xxPiN", "TOK", "sEc", "x aPi"] {
            assert!(has_trigram(text), "{text}");
        }
        assert!(!has_trigram("message") && !has_trigram(""));
        assert!(TRIGRAM_SEARCH.is_some() || !cfg!(target_arch = "x86_64"));
        assert_eq!(next_trigram("a progressToken", 0), Some(10));
        assert_eq!(next_trigram("xxPiN", 1), Some(2));
        assert_eq!(next_trigram("message", 0), None);
    }

    #[test]
    fn placeholders_in_a_key_are_not_its_words() {
        let rules = KeyRules::default();
        assert!(!rules.is_sensitive("no[REDACTED:password:e3b98a4d]te"));
        assert!(!rules.is_sensitive("[REDACTED:keyctx:e3b98a4d]"));
        assert!(rules.is_sensitive("pass[REDACTED:x:e3b98a4d]word"));
        assert!(rules.is_sensitive("api_key[REDACTED:x:e3b98a4d]"));
    }

    #[test]
    fn sensitive_words_unanchored() {
        for k in [
            "token",
            "accessToken",
            "X-Api-Key",
            "API_KEY",
            "apikey",
            "refresh_token",
            "Authorization",
            "password_policy",
            "secretariat",
            "credentials",
            "passwd",
        ] {
            assert!(rules().is_sensitive(k), "{k}");
        }
        for k in [
            "name",
            "text",
            "key",
            "api",
            "author",
            "tok",
            "oauth",
            "passthrough",
        ] {
            assert!(!rules().is_sensitive(k), "{k}");
        }
    }

    #[test]
    fn auth_and_pass_only_as_segments() {
        for k in ["auth", "basic_auth", "authHeader", "pass", "db.pass"] {
            assert!(rules().is_sensitive(k), "{k}");
        }
    }

    #[test]
    fn pin_only_as_a_segment() {
        for k in ["pin", "card_pin", "pinCode", "user.pin", "PIN", "my pin"] {
            assert!(rules().is_sensitive(k), "{k}");
        }
        for k in [
            "shipping", "mapping", "spinner", "pinnacle", "pinned", "PINCode",
        ] {
            assert!(!rules().is_sensitive(k), "{k}");
        }
    }

    #[test]
    fn extra_keys_whole_or_segment() {
        let r = KeyRules::new(["handle".to_owned()]);
        for k in ["handle", "Handle", "session_handle", "sessionHandle"] {
            assert!(r.is_sensitive(k), "{k}");
        }
        assert!(!r.is_sensitive("handler"));
    }

    #[test]
    fn a_progress_token_is_a_correlation_id_unless_the_config_says_otherwise() {
        assert!(!rules().is_sensitive("progressToken"));
        assert!(
            rules().is_sensitive("progress_token"),
            "only MCP's exact key is exempt"
        );
        assert!(KeyRules::new(["progressToken".to_owned()]).is_sensitive("progressToken"));
    }

    #[test]
    fn segment_split() {
        assert_eq!(segments("cardPin_code"), ["card", "pin", "code"]);
        assert_eq!(segments("a1B"), ["a1", "b"]);
        assert_eq!(segments("__x..y--"), ["x", "y"]);
        assert_eq!(segments("ABCDef"), ["abcdef"]);
    }

    #[test]
    fn numbers() {
        let allow = HashSet::new();
        let ctx = KeyCtx {
            sensitive: true,
            discovery: false,
            shallow: false,
        };
        assert_eq!(
            numeric_secret(ctx, 123456789.0, &allow).as_deref(),
            Some("123456789")
        );
        assert_eq!(numeric_secret(ctx, 4096.0, &allow), None);
        assert_eq!(numeric_secret(ctx, 1.5, &allow), None);
        assert_eq!(numeric_secret(ctx, f64::NAN, &allow), None);
        assert_eq!(
            numeric_text(1e21).as_deref(),
            Some("1000000000000000000000")
        );
        assert_eq!(
            numeric_text(12345678901234567890.0).as_deref(),
            Some("12345678901234567168")
        );
        assert_eq!(numeric_text(-0.0).as_deref(), Some("0"));
        assert_eq!(numeric_secret(KeyCtx::NONE, 123456789.0, &allow), None);
    }

    #[test]
    fn plain_urls() {
        for u in [
            "https://auth.example.com/oauth/token",
            "http://a.example:8080/x",
            "HTTPS://A.EXAMPLE/",
            "https://a.example/?",
            "https://a.example#frag?x=1",
            "https://[::1]:9/t",
            "https://@a.example/",
        ] {
            assert!(is_plain_http_url(u), "{u}");
        }
        for u in [
            "https://user:pa55word@evil.test/token",
            "https://user@evil.test/",
            "ftp://auth.example.com/token",
            "https://evil.test/?secret=abcdefghij",
            "eyJhbGciOiJub25lIn0.eyJub3RlIjoiTk9ULUEtUkVBTC1KV1QifQ.sig",
            "https://",
            "https://exa mple.com/",
            "https://a.example:99999/",
            "not a url",
        ] {
            assert!(!is_plain_http_url(u), "{u}");
        }
    }
}
