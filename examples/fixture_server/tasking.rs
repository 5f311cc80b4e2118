//! `tasking`: a 2026-07-28-only server that answers `tools/call build` with a task handle
//! (`io.modelcontextprotocol/tasks` extension) instead of a result, with a fixed state script so a
//! recording of it is deterministic:
//!
//! ```text
//! poll 1  working
//! poll 2  input_required   (stays there until tasks/update brings inputResponses)
//! poll 3  working
//! poll 4  completed        (and stays completed)
//! ```
//!
//! `TASKING_STALL=1` never leaves `working`. `tasks/cancel` ends a running task as `cancelled`.
//! `tasks/result` (the blocking 2025-11-25 method, gone from the extension but still sent by
//! older clients) is answered once the task is terminal, at once if it already is. A listen whose
//! filter names the task id hears `notifications/tasks` when input is accepted and when the task
//! ends. There is one task, `task-0001`, however many builds are started.

use std::io;

use serde_json::{Value, json};

use crate::pushy::SUBSCRIPTION_ID;
use crate::wire::{self, Emit, Flow, Incoming, Out, Server};

pub(crate) const TASK_ID: &str = "task-0001";
const PROTOCOL: &str = "2026-07-28";
const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// Fixed, so two recordings of this fixture compare equal.
const CREATED_AT: &str = "2026-10-08T00:00:00Z";

pub(crate) struct Tasking {
    stall: bool,
    polls: u32,
    awaiting_input: bool,
    cancelled: bool,
    /// The terminal state, once reached; every later poll gets it again.
    finished: Option<Value>,
    /// `tasks/result` requests waiting for the task to end.
    waiting_results: Vec<Value>,
    /// Open listens: listen id and the filter asked for.
    subscriptions: Vec<(Value, Value)>,
}

/// A task in `status`, with the fixed stamps, merged with `extra` fields.
fn task(status: &str, message: &str, extra: Value) -> Value {
    let mut task = json!({
        "taskId": TASK_ID,
        "status": status,
        "statusMessage": message,
        "createdAt": CREATED_AT,
        "lastUpdatedAt": CREATED_AT,
        "ttlMs": 60_000,
        "pollIntervalMs": 50
    });
    if let (Value::Object(fields), Value::Object(extra)) = (&mut task, extra) {
        fields.extend(extra);
    }
    task
}

fn complete(mut payload: Value) -> Value {
    if let Value::Object(fields) = &mut payload {
        fields.shift_insert(0, "resultType".to_owned(), json!("complete"));
    }
    payload
}

impl Tasking {
    pub(crate) fn from_env() -> Self {
        Self {
            stall: std::env::var("TASKING_STALL").is_ok_and(|value| value == "1"),
            polls: 0,
            awaiting_input: false,
            cancelled: false,
            finished: None,
            waiting_results: Vec::new(),
            subscriptions: Vec::new(),
        }
    }

    /// The task as it stands, advancing the script when a poll is due a new state.
    fn advance(&mut self) -> Value {
        if let Some(finished) = &self.finished {
            return finished.clone();
        }
        if self.cancelled {
            return self.finish(task("cancelled", "cancelled by the client", json!({})));
        }
        if self.awaiting_input {
            return task(
                "input_required",
                "waiting for the target to confirm",
                json!({"inputRequests": {
                    "confirm": {"method": "elicitation/create", "params": {
                        "mode": "form",
                        "message": "Deploy to production?",
                        "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}}
                    }}
                }}),
            );
        }
        self.polls += 1;
        if !self.stall && self.polls == 2 {
            self.awaiting_input = true;
            return self.advance();
        }
        if !self.stall && self.polls >= 4 {
            let result =
                json!({"content": [{"type": "text", "text": "built: ok"}], "isError": false});
            return self.finish(task(
                "completed",
                "build finished",
                json!({"result": result}),
            ));
        }
        task("working", &format!("poll {}", self.polls), json!({}))
    }

    fn finish(&mut self, terminal: Value) -> Value {
        self.finished = Some(terminal.clone());
        terminal
    }

    /// What `tasks/result` answers once the task is terminal.
    fn final_answer(&self, id: &Value) -> Option<Emit> {
        let finished = self.finished.as_ref()?;
        let related = json!({"io.modelcontextprotocol/related-task": {"taskId": TASK_ID}});
        Some(match finished.get("result") {
            Some(result) => {
                let mut result = complete(result.clone());
                result["_meta"] = related;
                wire::result(id, result)
            }
            None => wire::error(id, -32603, "the task was cancelled"),
        })
    }

    /// Full task state to every listen that asked for this task.
    fn announce(&self, state: &Value) -> Vec<Emit> {
        self.subscriptions
            .iter()
            .filter(|(_, asked)| {
                asked
                    .get("taskIds")
                    .and_then(Value::as_array)
                    .is_some_and(|ids| ids.iter().any(|id| id == TASK_ID))
            })
            .map(|(listen, _)| {
                let mut params = json!({"_meta": {SUBSCRIPTION_ID: listen}});
                if let (Value::Object(fields), Value::Object(state)) = (&mut params, state.clone())
                {
                    fields.extend(state);
                }
                wire::notification("notifications/tasks", params)
            })
            .collect()
    }

    fn unknown_task(&self, id: &Value, message: &Incoming) -> Option<Emit> {
        let asked = message.str_param("/taskId");
        (asked != Some(TASK_ID))
            .then(|| wire::error(id, -32602, &format!("unknown task {}", asked.unwrap_or(""))))
    }

    fn respond(&mut self, message: &Incoming) -> Vec<Emit> {
        let Some(id) = message.request_id() else {
            if message.method() == "notifications/cancelled"
                && let Some(cancelled) = message.params.get("requestId")
            {
                self.subscriptions.retain(|(listen, _)| listen != cancelled);
            }
            return Vec::new();
        };
        let method = message.method();
        if method.starts_with("tasks/")
            && let Some(unknown) = self.unknown_task(id, message)
        {
            return vec![unknown];
        }
        match method {
            "server/discover" => vec![wire::result(
                id,
                json!({
                    "resultType": "complete",
                    "supportedVersions": [PROTOCOL],
                    "capabilities": {"tools": {}, "extensions": {TASKS_EXTENSION: {}}},
                    "ttlMs": 0,
                    "cacheScope": "public",
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "tasking-server", "version": "1.0.0"}}
                }),
            )],
            "tools/list" => vec![wire::result(
                id,
                json!({
                    "resultType": "complete",
                    "tools": [{
                        "name": "build",
                        "description": "Start a build, which takes long enough to be a task.",
                        "inputSchema": {"type": "object", "properties": {"target": {"type": "string"}}, "required": ["target"]}
                    }],
                    "ttlMs": 60_000,
                    "cacheScope": "public"
                }),
            )],
            "tools/call" if message.str_param("/name") == Some("build") => {
                // The handle, not the result: resultType says which shape arrived.
                let mut handle = task("working", "queued", json!({}));
                if let Value::Object(fields) = &mut handle {
                    fields.shift_insert(0, "resultType".to_owned(), json!("task"));
                }
                vec![wire::result(id, handle)]
            }
            "tools/call" => {
                let name = message.str_param("/name").unwrap_or("");
                vec![wire::error(id, -32602, &format!("unknown tool {name}"))]
            }
            "tasks/get" => {
                let was_finished = self.finished.is_some();
                let state = self.advance();
                let mut emits = vec![wire::result(id, complete(state.clone()))];
                // A listener hears about the end once, when it happens.
                if !was_finished && self.finished.is_some() {
                    emits.extend(self.announce(&state));
                    emits.extend(self.flush_results());
                }
                emits
            }
            "tasks/update" => {
                let answered = message
                    .params
                    .get("inputResponses")
                    .and_then(Value::as_object)
                    .is_some_and(|responses| !responses.is_empty());
                let mut emits = vec![wire::result(id, complete(json!({})))];
                if answered && self.awaiting_input {
                    self.awaiting_input = false;
                    emits.extend(self.announce(&task("working", "input accepted", json!({}))));
                }
                emits
            }
            "tasks/cancel" => {
                if self.finished.is_none() {
                    self.cancelled = true;
                    self.awaiting_input = false;
                }
                vec![wire::result(id, complete(json!({})))]
            }
            "tasks/result" => match self.final_answer(id) {
                Some(answer) => vec![answer],
                None => {
                    self.waiting_results.push(id.clone());
                    Vec::new()
                }
            },
            "subscriptions/listen" => {
                let asked = message
                    .params
                    .get("notifications")
                    .cloned()
                    .unwrap_or(json!({}));
                self.subscriptions.push((id.clone(), asked.clone()));
                vec![wire::notification(
                    "notifications/subscriptions/acknowledged",
                    json!({"_meta": {SUBSCRIPTION_ID: id}, "notifications": asked}),
                )]
            }
            other => vec![wire::error(
                id,
                -32601,
                &format!("method not found: {other}"),
            )],
        }
    }

    fn flush_results(&mut self) -> Vec<Emit> {
        let waiting = std::mem::take(&mut self.waiting_results);
        waiting
            .iter()
            .filter_map(|id| self.final_answer(id))
            .collect()
    }
}

impl Server for Tasking {
    fn handle(&mut self, message: Incoming, out: &mut Out) -> io::Result<Flow> {
        out.emit_all(&self.respond(&message))?;
        Ok(Flow::Continue)
    }
}
