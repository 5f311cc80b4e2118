//! The machine report of `check`: the [`CheckReport`] object, pretty-printed with two-space
//! indentation like the reference's `JSON.stringify(report, null, 2)`.

use super::CheckReport;

/// Renders the report, ending with a newline.
pub(crate) fn render(report: &CheckReport) -> String {
    // Serialising plain data with string keys cannot fail; an empty object is a safe stand-in.
    let mut text = serde_json::to_string_pretty(report).unwrap_or_else(|_| "{}".to_owned());
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::report::{Gate, ReportHead};

    #[test]
    fn field_order_and_omissions() {
        let head = ReportHead {
            target: "t".into(),
            server: Some(json!({"name": "s", "version": "1", "title": "S"})),
            protocol_version: None,
            tool_count: 1,
            resource_count: Some(0),
            prompt_count: None,
        };
        let report = CheckReport::new(head, Vec::new(), Gate::Warn, Gate::Never);
        assert_eq!(
            render(&report),
            r#"{
  "target": "t",
  "server": {
    "name": "s",
    "version": "1",
    "title": "S"
  },
  "toolCount": 1,
  "resourceCount": 0,
  "findings": [],
  "failOn": "warn",
  "lintFailOn": "never",
  "ok": true
}
"#
        );
    }
}
