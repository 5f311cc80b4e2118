//! The rules' tests: each built-in shape, the screens, and the fast searches against plain ones.

use super::*;

/// The built-in rules with no config: nothing allowed, no extra keys.
/// Texts of fewer than `most` of `parts`, end to end: what the property tests compare the
/// fast searches and screens with the plain ones on.
fn texts_of(
    parts: &'static [&'static str],
    most: usize,
) -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::strategy::Strategy;
    proptest::collection::vec(proptest::sample::select(parts), 0..most).prop_map(|p| p.concat())
}

fn builtin_shapes() -> Shapes<'static> {
    static ALLOW: LazyLock<HashSet<String>> = LazyLock::new(HashSet::new);
    static KEYS: LazyLock<KeyRules> = LazyLock::new(KeyRules::default);
    Shapes {
        user: &[],
        allow: &ALLOW,
        keys: &KEYS,
    }
}

/// The built-in rule named `name` (the pair rule is named `keyctx`).
fn builtin_rule(name: &str) -> &'static Builtin {
    match BUILTINS.iter().find(|r| r.name == name) {
        Some(rule) => rule,
        None => panic!("{name} is not built in"),
    }
}

fn redact(s: &str) -> String {
    let shapes = builtin_shapes();
    shapes
        .apply(s, &mut |_, _| {})
        .unwrap_or_else(|| s.to_owned())
}

const SECRETS: [(&str, &str); 8] = [
    (
        "jwt",
        "eyJhbGciOiJub25lIn0.eyJub3RlIjoiTk9ULUEtUkVBTC1KV1QifQ.NOT-A-REAL-SIGNATURE",
    ),
    ("github", "ghp_NOTAREALTOKENFORTESTSONLY0000000000"),
    (
        "github",
        "github_pat_NOT_A_REAL_PAT_FOR_TESTS_ONLY_0000000000",
    ),
    ("openai", "sk-NOT-A-REAL-OPENAI-KEY-000000"),
    ("anthropic", "sk-ant-NOT-A-REAL-ANTHROPIC-KEY-0000"),
    ("slack", "xoxb-NOT-A-REAL-SLACK-TOKEN-FIXTURE"),
    ("aws", "AKIANOTAREALKEYXXX00"),
    ("google", "AIzaNOT-A-REAL-GOOGLE-API-KEY-000000000"),
];

#[test]
fn each_rule_replaces_the_whole_token() {
    for (rule, secret) in SECRETS {
        let out = redact(&format!("value: {secret} ."));
        assert_eq!(
            out,
            format!("value: {} .", placeholder(rule, secret)),
            "{rule}"
        );
    }
}

#[test]
fn group_rules_keep_their_context() {
    assert_eq!(
        redact("Bearer abcdefgh12345678, then more"),
        format!(
            "Bearer {}, then more",
            placeholder("bearer", "abcdefgh12345678")
        )
    );
    for (dsn, pw) in [
        (
            "postgres://app_user:s3cr3tP4ss@db.internal:5432/appdb",
            "s3cr3tP4ss",
        ),
        (
            "redis://default:r3d1sPassw0rd@cache:6379/0",
            "r3d1sPassw0rd",
        ),
        (
            "HTTPS://user:httpPassw0rd@api.example.com/v1",
            "httpPassw0rd",
        ),
        ("redis://:r3d1sOnlyPass@cache:6379", "r3d1sOnlyPass"),
        ("amqp://u:p@ss/w:rd@mq.internal/vh", "p@ss/w:rd"),
        ("postgres://u:p%40ss%20word@db/x", "p%40ss%20word"),
        ("redis://:my secret pass@cache:6379", "my secret pass"),
        ("mysql://root:a b@c d@db:3306", "a b@c d"),
    ] {
        assert_eq!(redact(dsn), dsn.replace(pw, &placeholder("urlcreds", pw)));
    }
}

#[test]
fn negatives_untouched() {
    for s in [
        "the quick brown fox jumps over the lazy dog",
        "ghp_tooshort",
        "sk-abc123",
        "eyJhbGciOiJIUzI1NiJ9",
        "AKIASHORT",
        "hello-world-this-is-a-slug",
        "https://example.com/path?query=1",
        "https://example.com:8443/users/@alice",
        "http://localhost:3000",
        "see http://host:80/a and mail@example.com",
        "http://example.com:8080 is down, mail admin@example.com",
        "postgres://app_user@db.internal:5432/appdb",
        "xghp_NOTAREALTOKENFORTESTSONLY0000000000",
        "AKIANOTAREALKEYXXX00X",
        "bearer abcdefghijkl",
    ] {
        assert_eq!(redact(s), s, "{s}");
    }
}

#[test]
fn jwt_of_any_length_is_taken_whole() {
    // Within the reference's caps the match is the reference's, so the hash is too.
    let counted = Regex::new(
        r"(?-u:\b)eyJ[A-Za-z0-9_-]{4,1024}\.[A-Za-z0-9_-]{4,8192}\.[A-Za-z0-9_-]{0,1024}",
    )
    .unwrap();
    let seg = |n: usize| "a".repeat(n);
    let small = format!("x eyJ{}.{}.{} y", seg(40), seg(400), seg(40));
    let m = counted.find(&small).unwrap().as_str();
    assert_eq!(redact(&small), small.replace(m, &placeholder("jwt", m)));
    for (h, p, sig) in [
        (10, 9000, 43),
        (1100, 10, 10),
        (10, 10, 3000),
        (10, 70_000, 86),
    ] {
        let jwt = format!("eyJ{}.{}.{}", seg(h), seg(p), seg(sig));
        let text = format!("token {jwt}!");
        assert_eq!(
            redact(&text),
            format!("token {}!", placeholder("jwt", &jwt))
        );
    }
}

#[test]
fn private_key_blocks() {
    let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAnotarealkey\nabc+/=\n-----END RSA PRIVATE KEY-----";
    assert_eq!(
        redact(&format!("key:\n{pem}\nafter")),
        format!("key:\n{}\nafter", placeholder("privatekey", pem))
    );
    let cut = "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAA";
    assert_eq!(redact(cut), placeholder("privatekey", cut));
    let public = "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----";
    assert_eq!(redact(public), public);
}

#[test]
fn pairs_in_free_text() {
    let ph = |s: &str| placeholder(KEYCTX, s);
    for (text, secret) in [
        ("login password=hunter2-correct ok", "hunter2-correct"),
        ("token: abc123def456", "abc123def456"),
        ("X-Api-Key: 0123456789abcdef.", "0123456789abcdef"),
        ("url?access_token=abcdefgh12345678&x=1", "abcdefgh12345678"),
        ("run --secret s3cr3t-value-here now", "s3cr3t-value-here"),
        (r#"{\"password\":\"hunter2-correct\"}"#, "hunter2-correct"),
        ("PASSWORD='longpassword9'", "longpassword9"),
    ] {
        assert_eq!(redact(text), text.replace(secret, &ph(secret)), "{text}");
    }
    for text in [
        "the token: required for access",
        "max_tokens=4096",
        "password=short",
        "author=someone-famous",
        "mapping: a-to-b-to-c-to-d",
        "id=123e4567-e89b-12d3-a456-426614174000",
        "--verbose abcdefghijkl",
    ] {
        assert_eq!(redact(text), text, "{text}");
    }
    let once = redact("password=hunter2-correct and token: zz-99-yy-88");
    assert_eq!(redact(&once), once);
}

#[test]
fn anthropic_before_openai() {
    let s = "sk-ant-NOT-A-REAL-ANTHROPIC-KEY-0000";
    assert_eq!(redact(s), placeholder("anthropic", s));
}

#[test]
fn placeholders_are_not_redacted_again() {
    let once = redact("postgres://user:hunter2hunter2@db.internal:5432/app");
    assert!(
        once.starts_with("postgres://user:[REDACTED:urlcreds:"),
        "{once}"
    );
    assert_eq!(redact(&once), once);
    let b =
        redact("Authorization: Bearer eyJhbGciOiJub25lIn0.eyJub3RlIjoiTk9ULUEtUkVBTC1KV1QifQ.x");
    assert!(
        b.starts_with("Authorization: Bearer [REDACTED:bearer:"),
        "{b}"
    );
    assert_eq!(redact(&b), b);
}

fn with_user(regex: &str, text: &str) -> Option<String> {
    let user = UserPattern {
        name: "mine".into(),
        regex: Regex::new(regex).unwrap(),
    };
    let (allow, keys) = (HashSet::new(), KeyRules::default());
    let shapes = Shapes {
        user: std::slice::from_ref(&user),
        allow: &allow,
        keys: &keys,
    };
    shapes.apply(text, &mut |_, _| {})
}

/// A user pattern that cuts into a built-in's match (the keyword, or a few letters of the
/// token) once left the token in clear; one that covers the secret still takes it.
#[test]
fn user_patterns_never_break_a_builtin_match() {
    let token = "abcdefghijklmnopqrstuvwxyz012345";
    let text = format!("Authorization: Bearer {token} sent");
    for regex in ["(?i)r", "(?i)bearer", "[a-z]", "ghij", "(?i)Bearer a"] {
        let out = with_user(regex, &text).unwrap();
        assert!(!out.contains("ghij"), "{regex}: {out}");
        assert!(
            out.contains(&placeholder("bearer", token)),
            "{regex}: {out}"
        );
        assert_eq!(with_user(regex, &out), None, "{regex}: not idempotent");
    }
    // Covering the secret: the user's placeholder, as the reference writes it.
    let out = with_user("Bearer [a-z0-9]+", &text).unwrap();
    let mine = placeholder("mine", &format!("Bearer {token}"));
    assert_eq!(out, format!("Authorization: {mine} sent"));
    // Away from any built-in match, a user pattern is applied as before.
    let out = with_user("(?i)r", "rare").unwrap();
    assert!(!out.contains('r'), "{out}");
}

#[test]
fn user_patterns_guarded_and_allowed() {
    let hex = UserPattern {
        name: "hex".into(),
        regex: Regex::new(r"(?-u:\b)[0-9a-f]{8}(?-u:\b)").unwrap(),
    };
    let allow: HashSet<String> = ["sk-THIS-ONE-IS-PUBLIC-000000".to_owned()].into();
    let keys = KeyRules::default();
    let shapes = Shapes {
        user: std::slice::from_ref(&hex),
        allow: &allow,
        keys: &keys,
    };
    let once = shapes
        .apply("Bearer NOT-A-REAL-BEARER-TOKEN-0000", &mut |_, _| {})
        .unwrap();
    assert!(once.starts_with("Bearer [REDACTED:bearer:"), "{once}");
    assert_eq!(shapes.apply(&once, &mut |_, _| {}), None);
    let loose = shapes.apply("loose deadbeef here", &mut |_, _| {}).unwrap();
    assert_eq!(
        loose,
        format!("loose {} here", placeholder("hex", "deadbeef"))
    );
    assert_eq!(
        shapes.apply("sk-THIS-ONE-IS-PUBLIC-000000", &mut |_, _| {}),
        None
    );
}

#[test]
fn replacement_opening_a_boundary_settles_in_one_pass() {
    // google swallows its 35 characters and leaves `ghp_…` after a `]`, where github's
    // leading word boundary now holds.
    let s = format!(
        "AIza{}ghp_NOTAREALTOKENFORTESTSONLY0000000000",
        "A".repeat(35)
    );
    let once = redact(&s);
    assert!(once.contains("[REDACTED:github:"), "{once}");
    assert_eq!(redact(&once), once);
}

/// The pair rule as first written: its pattern matches the value whole, and plain scans
/// check it. Quadratic on a line of many pairs; kept to hold the rule's remembered runs
/// ([`ValueRuns`]) equal to it.
fn plain_pairs(s: &str, keys: &KeyRules) -> Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> {
    static PLAIN: LazyLock<Regex> = LazyLock::new(|| {
        let rule = builtin_rule("keyctx");
        let pattern = rule.regex.as_str();
        let Some(single) = pattern.strip_suffix(')') else {
            panic!("the value is the last group");
        };
        Regex::new(&format!("{single}+)")).unwrap()
    });
    plain_scan(s, &PLAIN, |caps| {
        let whole = caps.get(0).unwrap();
        let name = caps.get(1).or_else(|| caps.get(4)).unwrap().as_str();
        let value = caps.get(5).unwrap();
        let trimmed = value
            .as_str()
            .trim_end_matches(['.', ':', ')', ']', '}', '!', '?']);
        let colon = caps.get(2).is_some_and(|m| m.as_str() == ":");
        let symbol = trimmed
            .chars()
            .any(|c| c.is_ascii_digit() || "-_+/=~!@#$%^*".contains(c));
        let secret = keys.classify(name).sensitive
            && trimmed.chars().count() >= MIN_SECRET_LEN
            && (!colon || symbol);
        secret.then(|| (whole.range(), value.start()..value.start() + trimmed.len()))
    })
}

/// The `urlcreds` rule as first written: its pattern matches the password and its `@`
/// whole. Quadratic on a line of many URLs; kept to hold [`PasswordRuns`] equal to it.
fn plain_url_passwords(s: &str) -> Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> {
    static PLAIN: LazyLock<Regex> = LazyLock::new(|| {
        let b = r"(?-u:\b)";
        let p = format!(r#"[^{JS_SPACE}?#"'<>`\\]"#);
        Regex::new(&format!(
            r#"{b}[a-zA-Z][a-zA-Z0-9+.-]{{0,31}}://[^{JS_SPACE}:/@]*:({p}+(?: {p}+){{0,3}})@"#
        ))
        .unwrap()
    });
    plain_scan(s, &PLAIN, |caps| {
        let secret = caps.get(1).unwrap();
        (!is_port_and_path(secret.as_str())).then(|| (caps.get(0).unwrap().range(), secret.range()))
    })
}

/// The scan both plain rules share: each match `judge` keeps is taken and the search goes on
/// after it; one it refuses is tried again from the next word boundary inside it.
fn plain_scan(
    s: &str,
    pattern: &Regex,
    judge: impl Fn(&regex::Captures<'_>) -> Option<(std::ops::Range<usize>, std::ops::Range<usize>)>,
) -> Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at <= s.len() {
        let Some(caps) = pattern.captures_at(s, at) else {
            break;
        };
        let whole = caps.get(0).unwrap();
        match judge(&caps) {
            Some(found) => {
                out.push(found);
                at = whole.end();
            }
            None => at = next_boundary(s, whole.start()),
        }
    }
    out
}

#[test]
fn url_passwords_end_where_the_plain_search_ends() {
    let shapes = builtin_shapes();
    let rule = builtin_rule("urlcreds");
    for text in [
        "http://u:pw @",
        "http://u:pw @@ x",
        "http://u:a b c d e@",
        "http://u:a b c d@ e@",
        "http://u:a b c@ d@",
        "http://u:a  b@",
        "http://u:a\tb@",
        "http://h:8080/a@b@",
        "http://h:8080/a@http://u:pw@host",
        "x://u:p@ y://u:q@",
        "see redis://:my pass word@cache now",
    ] {
        let found = shapes.matches_from(
            text,
            rule.name,
            &rule.regex,
            rule.group,
            rule.kind,
            Guard::Claiming,
            false,
        );
        assert_eq!(found, plain_url_passwords(text), "{text:?}");
    }
    // The plain search does find passwords here: the comparison is not vacuous.
    assert_eq!(
        plain_url_passwords("see redis://:my pass word@cache now").len(),
        1
    );
    assert_eq!(
        plain_url_passwords("http://h:8080/a@http://u:pw@host").len(),
        1
    );
}

proptest::proptest! {
    #[test]
    fn url_passwords_equal_the_plain_search(
        text in texts_of(&[
            "http://", "a+b://", "user", ":", "8080", "/", "@", " ", "  ", "pw", "?", "#",
            "\"", "é", "\t",
        ], 40),
    ) {
        let shapes = builtin_shapes();
        let rule = builtin_rule("urlcreds");
        let found = shapes.matches_from(
            &text, rule.name, &rule.regex, rule.group, rule.kind, Guard::Claiming, false,
        );
        proptest::prop_assert_eq!(found, plain_url_passwords(&text), "{:?}", text);
    }
}

#[test]
fn the_rules_are_linear_in_the_text() {
    // Hostile lines: every `token` a sensitive name whose value runs to the end of the
    // line, and every URL a port and path whose "password" runs to the last `@` (the
    // plain searches looked at the whole rest of the line once per candidate).
    let shapes = builtin_shapes();
    for unit in ["token:", "token=a=", "http://h:8080/a@", "--token --token "] {
        let small = unit.repeat(16 * 1024 / unit.len());
        let large = unit.repeat(64 * 1024 / unit.len());
        crate::scaling::assert_linear(unit, &small, &large, &|text| {
            std::hint::black_box(shapes.apply(text, &mut |_, _| {}));
        });
    }
}

#[test]
fn pair_search_near_words_reaches_back_a_whole_name() {
    let shapes = builtin_shapes();
    let rule = builtin_rule("keyctx");
    // A 64-character name whose word ends it, after ` --`; and a password after many
    // pairs whose names are not sensitive.
    let long = format!("x{}_token", "y".repeat(57));
    assert_eq!(long.len(), 64);
    let texts = [
        format!("run it --{long} abcdefgh12 now"),
        format!(
            "{}password=abcdefgh12",
            r#""id":1,"score":2.5,"#.repeat(100)
        ),
    ];
    for text in &texts {
        let find = |near| {
            shapes.matches_from(
                text,
                rule.name,
                &rule.regex,
                rule.group,
                rule.kind,
                Guard::None,
                near,
            )
        };
        let plain = find(false);
        assert_eq!(plain.len(), 1, "{text}");
        assert_eq!(find(true), plain, "{text}");
    }
}

proptest::proptest! {
    /// The screens are exact where they stand in for a plain test, and necessary where they
    /// stand before a regex: one search gives each rule's `contains` answer, and the pair
    /// rule never matches a text without `:`, `=` or `-`.
    #[test]
    fn screens_agree_with_the_plain_tests(
        text in texts_of(&[
            "sk-ant-", "gh", "ghp_", "github_pat_", "xox", "://", "eyJ", "Bearer ", "AKIA",
            "AIza", "PRIVATE KEY", "token", "Password", "=", ":", "--", " ", "\t",
            "abcdefgh12", "\"",
        ], 24),
    ) {
        let mask = needle_mask(&text);
        for (i, rule) in BUILTINS.iter().enumerate() {
            let plain = rule.needles.iter().any(|n| text.contains(n));
            proptest::prop_assert_eq!(mask & (1 << i) != 0, plain, "{} in {:?}", rule.name, text);
            if rule.kind == Kind::Pair && !may_hold_pair(&text) {
                proptest::prop_assert!(!rule.regex.is_match(&text), "{:?}", text);
            }
        }
    }

    /// The pair rule's skip to where a sensitive name could be finds exactly what the plain
    /// left-to-right search finds, claims included: names right at the reach (a long word
    /// before a `--`), names that hold a word without being sensitive, multi-byte text and
    /// placeholders among them.
    #[test]
    fn pair_search_near_words_equals_the_plain_search(
        text in texts_of(&[
            "token", "Password", "pin", "card_pin", "authorization", "AUTH", "api-key",
            "secretary", "progressToken", "id", "\"\":\"\"", "\\\"", "=", ":", "--", " ",
            "\t", ".", "abcdefgh12", "é", "[REDACTED:keyctx:0123abcd]", "token:", "1", ").",
            "--token ", "x_x_x_x_x_x_x_x_x_x_x_x_x_x_x_x_x_x_x_x_x_x_x_x_x_x_x_x_x_x",
        ], 40),
    ) {
        let shapes = builtin_shapes();
        let rule = builtin_rule("keyctx");
        for guard in [Guard::None, Guard::Claiming] {
            let plain = shapes.matches_from(
                &text, rule.name, &rule.regex, rule.group, rule.kind, guard, false,
            );
            let near = shapes.matches_from(
                &text, rule.name, &rule.regex, rule.group, rule.kind, guard, true,
            );
            proptest::prop_assert_eq!(&plain, &near, "{:?}", text);
            if matches!(guard, Guard::Claiming) {
                proptest::prop_assert_eq!(plain, plain_pairs(&text, shapes.keys), "{:?}", text);
            }
        }
    }
}
