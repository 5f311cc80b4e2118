//! A transport for tests: each message sent is answered with the lines a script returns, and
//! every message sent is kept, so tests can drive the client (and its users, such as replay
//! passthrough) through any conversation without a process.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::{BoxFuture, Received, Transport, TransportError, TransportKind};

type Script = Box<dyn FnMut(&Value) -> Vec<String> + Send>;

struct Scripted {
    script: Script,
    queue: VecDeque<String>,
    sent: Arc<Mutex<Vec<String>>>,
}

/// What the client wrote, in order.
#[derive(Clone)]
pub(crate) struct Sent(Arc<Mutex<Vec<String>>>);

impl Sent {
    pub(crate) fn texts(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    pub(crate) fn values(&self) -> Vec<Value> {
        self.texts()
            .iter()
            .map(|text| serde_json::from_str(text).unwrap())
            .collect()
    }
}

/// A stdio-kind transport run by `script`; it stays silent once the script has nothing to say.
pub(crate) fn transport(
    script: impl FnMut(&Value) -> Vec<String> + Send + 'static,
) -> (Box<dyn Transport>, Sent) {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let transport = Scripted {
        script: Box::new(script),
        queue: VecDeque::new(),
        sent: Arc::clone(&sent),
    };
    (Box::new(transport), Sent(sent))
}

impl Transport for Scripted {
    fn kind(&self) -> TransportKind {
        TransportKind::Stdio
    }

    fn send<'a>(&'a mut self, message: &'a str) -> BoxFuture<'a, Result<(), TransportError>> {
        Box::pin(async move {
            let value: Value = serde_json::from_str(message).unwrap();
            self.queue.extend((self.script)(&value));
            self.sent.lock().unwrap().push(message.to_owned());
            Ok(())
        })
    }

    fn receive(&mut self) -> BoxFuture<'_, Result<Received, TransportError>> {
        Box::pin(async move {
            match self.queue.pop_front() {
                Some(line) => Ok(Received::Message(line.into_bytes())),
                None => std::future::pending().await,
            }
        })
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

pub(crate) fn result(request: &Value, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": request["id"], "result": result}).to_string()
}

pub(crate) fn error(request: &Value, code: i64, message: &str, data: Value) -> String {
    json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": code, "message": message, "data": data}})
        .to_string()
}

/// A legacy server's `initialize` answer.
pub(crate) fn legacy_init(request: &Value) -> Vec<String> {
    vec![result(
        request,
        json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}),
    )]
}
