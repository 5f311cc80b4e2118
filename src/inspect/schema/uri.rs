//! Just enough RFC 3986 to resolve `$id` and `$ref` against a base URI.

/// A URI reference split into its five parts (RFC 3986 §3); `None` means absent, which differs
/// from empty (`http://h?` has an empty query).
struct Parts<'a> {
    scheme: Option<&'a str>,
    authority: Option<&'a str>,
    path: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

fn split(reference: &str) -> Parts<'_> {
    let (rest, fragment) = match reference.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (reference, None),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((rest, query)) => (rest, Some(query)),
        None => (rest, None),
    };
    let (scheme, rest) = match rest.split_once(':') {
        Some((scheme, rest))
            if scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) =>
        {
            (Some(scheme), rest)
        }
        _ => (None, rest),
    };
    let (authority, path) = match rest.strip_prefix("//") {
        Some(rest) => {
            let end = rest.find('/').unwrap_or(rest.len());
            (Some(&rest[..end]), &rest[end..])
        }
        None => (None, rest),
    };
    Parts {
        scheme,
        authority,
        path,
        query,
        fragment,
    }
}

/// `reference` resolved against the absolute `base` (RFC 3986 §5.2.2), scheme lower-cased.
pub(super) fn resolve(base: &str, reference: &str) -> String {
    let base = split(base);
    let r = split(reference);
    let (scheme, authority, path, query);
    if let Some(own) = r.scheme {
        scheme = own;
        authority = r.authority;
        path = remove_dot_segments(r.path);
        query = r.query;
    } else {
        scheme = base.scheme.unwrap_or("");
        if r.authority.is_some() {
            authority = r.authority;
            path = remove_dot_segments(r.path);
            query = r.query;
        } else {
            authority = base.authority;
            if r.path.is_empty() {
                path = base.path.to_owned();
                query = r.query.or(base.query);
            } else {
                path = if r.path.starts_with('/') {
                    remove_dot_segments(r.path)
                } else {
                    remove_dot_segments(&merge(&base, r.path))
                };
                query = r.query;
            }
        }
    }
    let mut out = scheme.to_ascii_lowercase();
    out.push(':');
    if let Some(authority) = authority {
        out.push_str("//");
        out.push_str(authority);
    }
    out.push_str(&path);
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    if let Some(fragment) = r.fragment {
        out.push('#');
        out.push_str(fragment);
    }
    out
}

fn merge(base: &Parts<'_>, path: &str) -> String {
    if base.authority.is_some() && base.path.is_empty() {
        return format!("/{path}");
    }
    match base.path.rfind('/') {
        Some(slash) => format!("{}{path}", &base.path[..=slash]),
        None => path.to_owned(),
    }
}

fn remove_dot_segments(path: &str) -> String {
    let mut output: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    let last = segments.len().saturating_sub(1);
    for (i, segment) in segments.iter().enumerate() {
        match *segment {
            "." => {
                if i == last {
                    output.push("");
                }
            }
            ".." => {
                if output.len() > 1 || output.first().is_some_and(|first| !first.is_empty()) {
                    output.pop();
                }
                if i == last {
                    output.push("");
                }
            }
            segment => output.push(segment),
        }
    }
    let joined = output.join("/");
    if path.starts_with('/') && !joined.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}

/// `uri` without its fragment, and the fragment (empty when absent).
pub(super) fn split_fragment(uri: &str) -> (&str, &str) {
    uri.split_once('#').unwrap_or((uri, ""))
}

/// Percent-decoding, as a JSON Pointer in a URI fragment needs; `None` when the escapes do not
/// decode to UTF-8.
pub(super) fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        if byte == b'%' {
            let hex = text.get(at + 1..at + 3)?;
            // `from_str_radix` would take a sign ("%+1"); a percent-escape is two hex digits.
            if !hex.bytes().all(|digit| digit.is_ascii_hexdigit()) {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            out.push(byte);
            at += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3986_examples() {
        let base = "http://a/b/c/d;p?q";
        for (reference, expected) in [
            ("g", "http://a/b/c/g"),
            ("./g", "http://a/b/c/g"),
            ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"),
            ("//g", "http://g"),
            ("?y", "http://a/b/c/d;p?y"),
            ("#s", "http://a/b/c/d;p?q#s"),
            ("", "http://a/b/c/d;p?q"),
            (".", "http://a/b/c/"),
            ("..", "http://a/b/"),
            ("../g", "http://a/b/g"),
            ("../../../g", "http://a/g"),
            ("g;x=1/../y", "http://a/b/c/y"),
            ("HTTPS://x/y", "https://x/y"),
        ] {
            assert_eq!(resolve(base, reference), expected, "{reference}");
        }
        assert_eq!(
            resolve("json-schema:///", "a.json"),
            "json-schema:///a.json"
        );
        assert_eq!(resolve("urn:example:a", "#x"), "urn:example:a#x");
    }

    #[test]
    fn fragments_and_escapes() {
        assert_eq!(split_fragment("a#/b"), ("a", "/b"));
        assert_eq!(split_fragment("a"), ("a", ""));
        assert_eq!(percent_decode("/a%20b%25").as_deref(), Some("/a b%"));
        assert_eq!(percent_decode("%zz"), None);
        assert_eq!(percent_decode("%ff"), None);
        assert_eq!(percent_decode("%+1"), None);
    }
}
