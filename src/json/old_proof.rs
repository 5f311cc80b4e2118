//! TEMPORARY: the new toolkit against the very functions it replaces, before they are deleted.
use proptest::prelude::*;
use serde_json::Value;

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-c]{0,3}",
        "[ab\u{E000}-\u{E002}\u{F8FF}\u{FFFD}-\u{FFFF}\u{10000}-\u{10002}\u{1F600}\u{10FFFF}]{0,3}",
        "\\PC{0,3}",
    ]
}

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>()
            .prop_map(|b| f64::from_bits(b))
            .prop_filter("finite, no tie", |f| f.is_finite()
                && super::js_number(*f) == crate::protocol::canonical::js_number(*f))
            .prop_map(Value::from),
        "\\PC{0,8}|[\"\\\\\\x00-\\x1f\\x7f]{0,4}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn orders_part(v: &Value) -> bool {
    match v {
        Value::Array(items) => items.iter().any(orders_part),
        Value::Object(map) => {
            let keys: Vec<&String> = map.keys().collect();
            keys.iter().any(|a| {
                keys.iter()
                    .any(|b| a.encode_utf16().cmp(b.encode_utf16()) != a.as_str().cmp(b))
            }) || map.values().any(orders_part)
        }
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20000))]
    #[test]
    fn writers(v in json()) {
        let new = super::stable_stringify(&v);
        prop_assert_eq!(&new, &crate::protocol::canonical::stable_stringify(&v));
        let text = v.to_string();
        let mut old_replay = String::new();
        crate::replay::canonical::write(&crate::replay::canonical::Node::parse(&text).unwrap(), &mut old_replay);
        let mut new_node = String::new();
        super::canonical::write(&super::Node::parse(&text).unwrap(), &mut new_node);
        prop_assert_eq!(&new, &new_node);
        if orders_part(&v) {
            prop_assert_ne!(&new, &old_replay);
        } else {
            prop_assert_eq!(&new, &old_replay);
        }
        // scanner: old and new agree on validity and on the copy, except where orders part
        let mut a = crate::replay::canonical::Scanner::new(&text);
        let mut oa = String::new();
        let ra = a.copy(&mut oa).is_some() && a.at_end();
        let mut b = super::Scanner::new(&text);
        let mut ob = String::new();
        let rb = b.copy(&mut ob).is_some() && b.at_end();
        if !orders_part(&v) {
            prop_assert_eq!(ra, rb);
            if ra { prop_assert_eq!(oa, ob); }
        }
        let mut a = crate::replay::canonical::Scanner::new(&text);
        let mut b = super::Scanner::new(&text);
        prop_assert_eq!(a.skip().is_some() && a.at_end(), b.skip().is_some() && b.at_end());
    }
}

#[test]
#[ignore]
fn dump_for_node() {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create("/tmp/jsnum.txt").unwrap());
    let mut x: u64 = 0x9E3779B97F4A7C15;
    for i in 0..2_000_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let n = match i % 4 {
            0 => f64::from_bits(x),
            1 => (x as i64 >> (x % 60)) as f64 / 8.0,
            2 => ((x >> 11) as f64) * 10f64.powi((x % 40) as i32 - 20),
            _ => (x % 100000) as f64 / 1000.0 * 10f64.powi((x % 50) as i32 - 25),
        };
        if !n.is_finite() {
            continue;
        }
        writeln!(
            f,
            "{:016x} {}",
            n.to_bits(),
            if std::env::var("OLDNUM").is_ok() {
                crate::protocol::canonical::js_number(n)
            } else {
                super::js_number(n)
            }
        )
        .unwrap();
    }
    // key order
    let mut g = std::io::BufWriter::new(std::fs::File::create("/tmp/jskeys.txt").unwrap());
    let pool = [
        "a",
        "b",
        "\u{E000}",
        "\u{FFFF}",
        "\u{FFFD}",
        "\u{10000}",
        "\u{1F600}",
        "é",
        "\u{D7FF}",
        "0",
        "10",
        "2",
        "A",
    ];
    for i in 0..20000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut obj = serde_json::Map::new();
        for j in 0..(x % 6) {
            let k: String = (0..((x >> (j * 3)) % 3 + 1))
                .map(|t| pool[((x >> (j * 7 + t * 4)) % pool.len() as u64) as usize])
                .collect();
            obj.insert(k, serde_json::json!(i));
        }
        let v = Value::Object(obj);
        writeln!(g, "{}\t{}", v, super::stable_stringify(&v)).unwrap();
    }
}
