//! The snapshot file, `mcp-contract.snapshot.json`: format version 1, the tools of one server.
//!
//! ```json
//! {
//!   "mcpCassetteContract": 1,
//!   "capturedAt": "2026-08-15T09:40:40.093Z",
//!   "server": { "name": "tiny-server", "version": "1.0.0" },
//!   "protocolVersion": "2025-06-18",
//!   "tools": [ { "name": "add", "description": "…", "inputSchema": {…}, "annotations": {…} } ]
//! }
//! ```
//!
//! Written as the reference writes it — 2-space indentation, JavaScript number spelling, a
//! trailing newline, tools sorted by [`super::collation::locale_cmp`] — so the committed file
//! does not churn when a project swaps binaries. Each tool keeps `name`, `description`,
//! `inputSchema` and `annotations` as the server sent them (a member the server left out is
//! left out; one it sent as `null` is kept as `null`). `outputSchema`, prompts and resources
//! are not part of the contract.
//!
//! Reading is strict about the version (any `mcpCassetteContract` other than 1 is refused, as
//! the reference refuses it) and names the file in every error.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::collation::locale_cmp;
use crate::json::stringify;

/// The only format version this build reads and writes.
pub(crate) const CONTRACT_VERSION: u64 = 1;
/// Where `snapshot` writes unless told otherwise; also the first SARIF anchor candidate.
pub(crate) const DEFAULT_FILE: &str = "mcp-contract.snapshot.json";
/// The member that marks a file as a contract snapshot (the SARIF anchor test).
pub(crate) const MARKER: &str = "\"mcpCassetteContract\"";

/// Why a snapshot could not be read or built.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SnapshotError {
    #[error("failed to read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not a JSON contract snapshot: {detail}", path.display())]
    NotJson { path: PathBuf, detail: String },
    #[error(
        "{} nests JSON deeper than 128 levels ({detail}); a contract snapshot that deep is refused rather than walked",
        path.display()
    )]
    TooDeep { path: PathBuf, detail: String },
    #[error("Unsupported contract snapshot version in {}", path.display())]
    Version { path: PathBuf },
    #[error("{} is not a contract snapshot: {problem}", path.display())]
    Shape { path: PathBuf, problem: String },
    #[error("failed to build the contract: {0}")]
    Listing(String),
}

/// One tool as the contract keeps it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ContractTool {
    pub name: String,
    /// As sent (normally a string; absent when the server omitted it).
    pub description: Option<Value>,
    pub input_schema: Option<Value>,
    pub annotations: Option<Value>,
}

impl ContractTool {
    /// Picks the contract members out of a `tools/list` entry.
    pub(crate) fn from_listing(entry: &Value, index: usize) -> Result<ContractTool, String> {
        let Some(obj) = entry.as_object() else {
            return Err(format!("tools/list entry {index} is not an object"));
        };
        let Some(Value::String(name)) = obj.get("name") else {
            return Err(format!("tools/list entry {index} has no string \"name\""));
        };
        Ok(ContractTool {
            name: name.clone(),
            description: obj.get("description").cloned(),
            input_schema: obj.get("inputSchema").cloned(),
            annotations: obj.get("annotations").cloned(),
        })
    }

    /// The description text compared by the drift rules (`description ?? ""`).
    pub(crate) fn description_text(&self) -> String {
        match &self.description {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => stringify::compact(other),
        }
    }

    fn to_value(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("name".to_owned(), Value::String(self.name.clone()));
        if let Some(d) = &self.description {
            obj.insert("description".to_owned(), d.clone());
        }
        if let Some(s) = &self.input_schema {
            obj.insert("inputSchema".to_owned(), s.clone());
        }
        if let Some(a) = &self.annotations {
            obj.insert("annotations".to_owned(), a.clone());
        }
        Value::Object(obj)
    }
}

/// A contract snapshot.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Snapshot {
    pub captured_at: String,
    /// The server's `serverInfo` object as it introduced itself (name, version, maybe title).
    pub server: Option<Value>,
    pub protocol_version: Option<String>,
    pub tools: Vec<ContractTool>,
}

impl Snapshot {
    /// Builds the contract of a live server from its whole `tools/list` (every page).
    /// Tools are sorted by name; a tool with an invalid `x-mcp-header` stays in (dropping it
    /// would report a present tool as removed).
    pub(crate) fn from_listing(
        tools: &[Value],
        server: Option<Value>,
        protocol_version: Option<String>,
        captured_at: String,
    ) -> Result<Snapshot, SnapshotError> {
        let mut list = tools
            .iter()
            .enumerate()
            .map(|(i, t)| ContractTool::from_listing(t, i))
            .collect::<Result<Vec<_>, _>>()
            .map_err(SnapshotError::Listing)?;
        // A stable sort: tools whose names collate equal keep the server's order.
        list.sort_by(|a, b| locale_cmp(&a.name, &b.name));
        Ok(Snapshot {
            captured_at,
            server,
            protocol_version,
            tools: list,
        })
    }

    /// Parses a snapshot file's text; `path` names the file in errors.
    pub(crate) fn parse(text: &str, path: &Path) -> Result<Snapshot, SnapshotError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let value: Value = serde_json::from_str(text).map_err(|e| {
            let detail = e.to_string();
            if detail.starts_with("recursion limit exceeded") {
                SnapshotError::TooDeep {
                    path: path.to_owned(),
                    detail,
                }
            } else {
                SnapshotError::NotJson {
                    path: path.to_owned(),
                    detail,
                }
            }
        })?;
        let shape = |problem: &str| SnapshotError::Shape {
            path: path.to_owned(),
            problem: problem.to_owned(),
        };
        let Value::Object(obj) = value else {
            return Err(shape("the top level is not a JSON object"));
        };
        // `!== 1` in the reference: a number equal to 1 (so `1.0` too) and nothing else.
        let version_ok = obj
            .get("mcpCassetteContract")
            .and_then(Value::as_f64)
            .is_some_and(|v| v == CONTRACT_VERSION as f64);
        if !version_ok {
            return Err(SnapshotError::Version {
                path: path.to_owned(),
            });
        }
        let captured_at = match obj.get("capturedAt") {
            Some(Value::String(s)) => s.clone(),
            _ => String::new(),
        };
        let protocol_version = match obj.get("protocolVersion") {
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        };
        let Some(Value::Array(entries)) = obj.get("tools") else {
            return Err(shape("\"tools\" is missing or not a list"));
        };
        let mut tools: Vec<ContractTool> = Vec::with_capacity(entries.len());
        // The reference keys tools by name in a Map: the first occurrence keeps its place, the
        // last one's content wins.
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (i, entry) in entries.iter().enumerate() {
            let tool = ContractTool::from_listing(entry, i).map_err(|_| {
                shape(&format!(
                    "tools[{i}] is not an object with a string \"name\""
                ))
            })?;
            match seen.get(&tool.name) {
                Some(&at) => tools[at] = tool,
                None => {
                    seen.insert(tool.name.clone(), tools.len());
                    tools.push(tool);
                }
            }
        }
        Ok(Snapshot {
            captured_at,
            server: obj.get("server").cloned(),
            protocol_version,
            tools,
        })
    }

    /// Reads and parses a snapshot file.
    pub(crate) fn read(path: &Path) -> Result<Snapshot, SnapshotError> {
        let text = std::fs::read_to_string(path).map_err(|source| SnapshotError::Io {
            path: path.to_owned(),
            source,
        })?;
        Snapshot::parse(&text, path)
    }

    /// The file text: 2-space JSON and a trailing newline.
    pub(crate) fn to_text(&self) -> String {
        let mut obj = Map::new();
        obj.insert(
            "mcpCassetteContract".to_owned(),
            Value::from(CONTRACT_VERSION),
        );
        obj.insert(
            "capturedAt".to_owned(),
            Value::String(self.captured_at.clone()),
        );
        if let Some(server) = &self.server {
            obj.insert("server".to_owned(), server.clone());
        }
        if let Some(p) = &self.protocol_version {
            obj.insert("protocolVersion".to_owned(), Value::String(p.clone()));
        }
        obj.insert(
            "tools".to_owned(),
            Value::Array(self.tools.iter().map(ContractTool::to_value).collect()),
        );
        let mut text = stringify::pretty(&Value::Object(obj));
        text.push('\n');
        text
    }
}

/// For each tool of a snapshot file, the 1-based line of its `"name"` member inside the
/// top-level `tools` array: where SARIF results about that tool are anchored.
///
/// A bracket-depth scan that skips string literals, so a description that happens to contain
/// `"name": "x"` is never mistaken for a tool. The first declaration of a name wins. Text that
/// is not JSON yields whatever was found before the scan lost track — never a panic.
pub(crate) fn tool_name_lines(text: &str) -> HashMap<String, u32> {
    #[derive(Clone, Copy, PartialEq)]
    enum Container {
        Object,
        Array,
    }
    // For each open container: its kind and whether it is the root's `tools` member.
    let mut stack: Vec<(Container, bool)> = Vec::new();
    let mut lines = HashMap::new();
    let bytes = text.as_bytes();
    let mut line: u32 = 1;
    let mut i = 0;
    // The last object key read, with the line it was on, at the current object level.
    let mut last_key: Option<(String, u32)> = None;
    let mut expecting_value = false;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' => line += 1,
            b'{' | b'[' => {
                let is_tools = b == b'['
                    && stack.len() == 1
                    && expecting_value
                    && last_key.as_ref().is_some_and(|(k, _)| k == "tools");
                stack.push((
                    if b == b'{' {
                        Container::Object
                    } else {
                        Container::Array
                    },
                    is_tools,
                ));
                last_key = None;
                expecting_value = false;
            }
            b'}' | b']' => {
                stack.pop();
                last_key = None;
                expecting_value = false;
            }
            b':' => expecting_value = true,
            b',' => {
                expecting_value = false;
                last_key = None;
            }
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                let end = (i + 1).min(bytes.len());
                let literal = serde_json::from_str::<String>(&text[start..end]).ok();
                let in_object = matches!(stack.last(), Some((Container::Object, _)));
                if in_object && !expecting_value {
                    last_key = literal.map(|k| (k, line));
                } else if expecting_value {
                    let in_tool = stack.len() == 3
                        && stack[1] == (Container::Array, true)
                        && stack[2].0 == Container::Object;
                    if let (true, Some((key, key_line)), Some(value)) =
                        (in_tool, last_key.as_ref(), literal)
                    {
                        if key == "name" {
                            lines.entry(value).or_insert(*key_line);
                        }
                    }
                    expecting_value = false;
                }
            }
            _ => {}
        }
        i += 1;
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The reference's snapshots, vendored under tests/fixtures/reference.
    fn fixture(name: &str) -> Option<String> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/reference/reference-0.4")
            .join(name);
        Some(std::fs::read_to_string(path).expect("the reference fixture is present"))
    }

    #[test]
    fn reference_snapshots_round_trip_byte_for_byte() {
        for name in [
            "tiny-server.snapshot.json",
            "tiny-server-evil.snapshot.json",
            "everything.snapshot.json",
        ] {
            let Some(text) = fixture(name) else {
                eprintln!("skipping: shared fixture {name} not found");
                continue;
            };
            let snap = Snapshot::parse(&text, Path::new(name)).unwrap();
            assert_eq!(snap.to_text(), text, "{name}");
        }
    }

    #[test]
    fn evil_fixture_lines() {
        let Some(text) = fixture("tiny-server-evil.snapshot.json") else {
            eprintln!("skipping: shared fixture not found");
            return;
        };
        let lines = tool_name_lines(&text);
        assert_eq!(lines.get("broken"), Some(&30));
        assert_eq!(lines.get("get_weather"), Some(&58));
        assert_eq!(lines.get("add"), Some(&11));
        assert_eq!(lines.len(), 5);
    }

    #[test]
    fn name_shaped_strings_are_not_tools() {
        let text = "{\n  \"mcpCassetteContract\": 1,\n  \"server\": {\"name\": \"srv\"},\n  \"tools\": [\n    {\n      \"description\": \"has \\\"name\\\": \\\"ghost\\\" inside\",\n      \"inputSchema\": {\"properties\": {\"name\": {\"type\": \"string\"}}, \"name\": \"deep\"},\n      \"name\": \"real\"\n    }\n  ]\n}\n";
        let lines = tool_name_lines(text);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(lines.get("real"), Some(&8));
    }

    #[test]
    fn scan_survives_garbage() {
        for text in [
            "",
            "{",
            "\"",
            "{\"tools\":[{\"name\":",
            "]]]}}}",
            "{\"tools\":[{\"name\":\"a\\",
        ] {
            let _ = tool_name_lines(text);
        }
    }

    #[test]
    fn writes_sorted_and_omits_absent_members() {
        let listing = vec![
            json!({"name": "b", "inputSchema": {"type": "object"}, "outputSchema": {}}),
            json!({"name": "A", "description": null, "title": "t"}),
            json!({"name": "a", "annotations": {"readOnlyHint": true}}),
        ];
        let snap = Snapshot::from_listing(
            &listing,
            Some(json!({"name": "s", "version": "1"})),
            Some("2025-06-18".into()),
            "2026-01-01T00:00:00.000Z".into(),
        )
        .unwrap();
        assert_eq!(
            snap.to_text(),
            "{\n  \"mcpCassetteContract\": 1,\n  \"capturedAt\": \"2026-01-01T00:00:00.000Z\",\n  \"server\": {\n    \"name\": \"s\",\n    \"version\": \"1\"\n  },\n  \"protocolVersion\": \"2025-06-18\",\n  \"tools\": [\n    {\n      \"name\": \"a\",\n      \"annotations\": {\n        \"readOnlyHint\": true\n      }\n    },\n    {\n      \"name\": \"A\",\n      \"description\": null\n    },\n    {\n      \"name\": \"b\",\n      \"inputSchema\": {\n        \"type\": \"object\"\n      }\n    }\n  ]\n}\n"
        );
        let back = Snapshot::parse(&snap.to_text(), Path::new("x")).unwrap();
        assert_eq!(back, snap);
    }

    #[test]
    fn refusals_name_the_file() {
        let p = Path::new("snap.json");
        let e = Snapshot::parse("not json", p).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("snap.json is not a JSON contract snapshot"),
            "{e}"
        );
        for v in ["2", "0", "\"1\"", "null"] {
            let e = Snapshot::parse(&format!("{{\"mcpCassetteContract\":{v},\"tools\":[]}}"), p)
                .unwrap_err();
            assert_eq!(
                e.to_string(),
                "Unsupported contract snapshot version in snap.json"
            );
        }
        let e = Snapshot::parse("{\"tools\":[]}", p).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Unsupported contract snapshot version in snap.json"
        );
        let e = Snapshot::parse("{\"mcpCassetteContract\":1}", p).unwrap_err();
        assert!(e.to_string().contains("\"tools\" is missing"), "{e}");
        let e =
            Snapshot::parse("{\"mcpCassetteContract\":1,\"tools\":[{\"name\":3}]}", p).unwrap_err();
        assert!(e.to_string().contains("tools[0]"), "{e}");
        assert!(Snapshot::parse("{\"mcpCassetteContract\":1.0,\"tools\":[]}", p).is_ok());
    }

    #[test]
    fn a_ten_thousand_deep_snapshot_is_refused_clearly() {
        let depth = 10_000;
        let text = format!(
            "{{\"mcpCassetteContract\":1,\"tools\":[{{\"name\":\"x\",\"inputSchema\":{}1{}}}]}}",
            "{\"a\":".repeat(depth),
            "}".repeat(depth)
        );
        let e = Snapshot::parse(&text, Path::new("deep.json")).unwrap_err();
        assert!(matches!(e, SnapshotError::TooDeep { .. }), "{e}");
        assert!(
            e.to_string()
                .starts_with("deep.json nests JSON deeper than 128 levels"),
            "{e}"
        );
    }

    #[test]
    fn duplicate_names_keep_first_place_last_content() {
        let text = r#"{"mcpCassetteContract":1,"tools":[{"name":"a","description":"1"},{"name":"b"},{"name":"a","description":"2"}]}"#;
        let s = Snapshot::parse(text, Path::new("x")).unwrap();
        assert_eq!(s.tools.len(), 2);
        assert_eq!(s.tools[0].description_text(), "2");
    }
}
