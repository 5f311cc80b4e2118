//! Serving Streamable HTTP on this machine: binding the `--listen` address (loudly, never
//! another port), the DNS-rebinding guard on `Origin`, bounded request bodies, and one accept
//! loop with graceful shutdown, shared by `record --http` (the proxy) and `replay --listen`.
//!
//! The rules are in docs/http.md ("Listening"): an address whose port is taken fails with the
//! holder named when this machine can tell; a non-loopback host is served with a warning; a
//! request whose `Origin` names any host but `localhost`, `127.0.0.1` or `::1` gets 403.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty, Full, Limited};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};

/// The body of every response we serve: whole, empty, or streamed from a channel (SSE).
pub type Body = BoxBody<Bytes, Infallible>;

/// A whole body.
pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

/// No body.
pub fn empty() -> Body {
    Empty::new().boxed()
}

/// A body fed through the returned sender; it ends when the sender is dropped. A send that
/// fails means the client went away: stop producing.
pub fn streaming(capacity: usize) -> (mpsc::Sender<Bytes>, Body) {
    let (tx, rx) = mpsc::channel::<Bytes>(capacity);
    (tx, ChannelBody { rx }.boxed())
}

/// A body read from a channel, one data frame per message.
struct ChannelBody {
    rx: mpsc::Receiver<Bytes>,
}

impl hyper::body::Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.rx
            .poll_recv(cx)
            .map(|chunk| chunk.map(|bytes| Ok(Frame::data(bytes))))
    }
}

/// Why the `--listen` address could not be bound. The command puts its own name in front.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// The reference's words: `<host>:<port> is already in use by <holder>. Stop it or pass --listen`.
    #[error("{addr} is already in use by {holder}. Stop it or pass --listen")]
    InUse { addr: String, holder: String },
    #[error("could not listen on {addr}: {message}")]
    Other { addr: String, message: String },
    #[error("--listen wants <host>:<port> (got \"{0}\")")]
    Address(String),
}

/// A bound listener and the address it really serves on (port 0 resolved).
pub struct Listening {
    pub listener: TcpListener,
    pub local: SocketAddr,
    /// The host as the user wrote it (`localhost`, `127.0.0.1`, `[::1]`), for the URL we print.
    pub host: String,
}

impl Listening {
    /// The base URL clients are pointed at: `http://<host>:<port>/`.
    pub fn url(&self) -> String {
        format!("http://{}:{}/", self.host, self.local.port())
    }

    /// True when the bound address is reachable only from this machine.
    pub fn is_loopback(&self) -> bool {
        self.local.ip().is_loopback()
    }
}

/// Splits `host:port` (`[v6]:port` for IPv6).
pub fn split_address(text: &str) -> Result<(String, u16), BindError> {
    let bad = || BindError::Address(text.to_owned());
    let (host, port) = text.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    if host.is_empty() {
        return Err(bad());
    }
    Ok((host.to_owned(), port))
}

/// Binds `host:port`. A taken port is an error naming its holder; nothing else is tried.
pub async fn bind(text: &str) -> Result<Listening, BindError> {
    let (host, port) = split_address(text)?;
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addr = format!("{host}:{port}");
    let listener = match bare.parse::<IpAddr>() {
        Ok(ip) => TcpListener::bind(SocketAddr::new(ip, port)).await,
        Err(_) => TcpListener::bind((bare, port)).await,
    };
    let listener = listener.map_err(|err| {
        if err.kind() == io::ErrorKind::AddrInUse {
            let holder = port_holder(port).unwrap_or_else(|| "unknown process".to_owned());
            BindError::InUse {
                addr: addr.clone(),
                holder,
            }
        } else {
            BindError::Other {
                addr: addr.clone(),
                message: err.to_string(),
            }
        }
    })?;
    let local = listener.local_addr().map_err(|err| BindError::Other {
        addr,
        message: err.to_string(),
    })?;
    Ok(Listening {
        listener,
        local,
        host,
    })
}

/// `pid N (command)` of the process listening on `port`, when /proc says (Linux); `None`
/// elsewhere or when the holder belongs to another user.
fn port_holder(port: u16) -> Option<String> {
    let inode = listening_inode(port)?;
    let needle = format!("socket:[{inode}]");
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        let holds = fds.flatten().any(|fd| {
            std::fs::read_link(fd.path()).is_ok_and(|target| target.as_os_str() == needle.as_str())
        });
        if holds {
            let command = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
            return Some(format!("pid {pid} ({})", command.trim()));
        }
    }
    None
}

fn listening_inode(port: u16) -> Option<String> {
    const LISTEN: &str = "0A";
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state), Some(inode)) =
                (fields.get(1), fields.get(3), fields.get(9))
            else {
                continue;
            };
            let local_port = local
                .rsplit_once(':')
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            if *state == LISTEN && local_port == Some(port) && *inode != "0" {
                return Some((*inode).to_owned());
            }
        }
    }
    None
}

/// The DNS-rebinding guard: no `Origin`, or one whose host is this machine by name.
pub fn origin_allowed(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let Ok(uri) = origin.parse::<http::Uri>() else {
        return false;
    };
    matches!(
        uri.host(),
        Some("localhost" | "127.0.0.1" | "::1" | "[::1]")
    )
}

/// The 403 a foreign `Origin` gets.
pub fn forbidden_origin() -> Response<Body> {
    let mut response = Response::new(full(
        "forbidden: this server answers only pages served from localhost\n",
    ));
    *response.status_mut() = StatusCode::FORBIDDEN;
    response
}

/// Why a request body could not be read whole.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error("the request body exceeds {limit} bytes")]
    TooLarge { limit: usize },
    #[error("failed to read the request body: {0}")]
    Read(String),
}

/// Reads a request body, refusing past `limit` bytes (the caller answers 413).
pub async fn read_body(body: Incoming, limit: usize) -> Result<Bytes, BodyError> {
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(err) if err.is::<http_body_util::LengthLimitError>() => {
            Err(BodyError::TooLarge { limit })
        }
        Err(err) => Err(BodyError::Read(err.to_string())),
    }
}

/// A shutdown signal many tasks can wait on: the accept loop, held-open streams, pacing waits.
#[derive(Clone, Debug)]
pub struct Shutdown {
    tx: Arc<watch::Sender<bool>>,
    rx: watch::Receiver<bool>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown::new()
    }
}

impl Shutdown {
    pub fn new() -> Shutdown {
        let (tx, rx) = watch::channel(false);
        Shutdown {
            tx: Arc::new(tx),
            rx,
        }
    }

    /// Starts the shutdown; every waiter wakes.
    pub fn trigger(&self) {
        self.tx.send_replace(true);
    }

    pub fn is_triggered(&self) -> bool {
        *self.rx.borrow()
    }

    /// Resolves once the shutdown has started.
    pub async fn wait(&self) {
        let mut rx = self.rx.clone();
        // An error means every sender is gone, which cannot happen while `self` holds one.
        let _ = rx.wait_for(|started| *started).await;
    }
}

/// How long connections get to finish after a shutdown starts (held-open streams are ended by
/// their owners as they see the same [`Shutdown`]).
pub const DRAIN: Duration = Duration::from_secs(2);

/// Serves HTTP/1.1 on `listener` until `shutdown` fires, then lets open connections finish for
/// at most [`DRAIN`]. `handle` answers every request; connections are served concurrently.
pub async fn serve<F, Fut>(listener: TcpListener, shutdown: Shutdown, handle: F)
where
    F: Fn(Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Response<Body>> + Send + 'static,
{
    let graceful = GracefulShutdown::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = shutdown.wait() => break,
        };
        let Ok((stream, _peer)) = accepted else {
            // Out of descriptors and the like: the loop goes on; each connection is independent.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let handle = handle.clone();
        let service = hyper::service::service_fn(move |request| {
            let answer = handle(request);
            async move { Ok::<_, Infallible>(answer.await) }
        });
        let connection = hyper::server::conn::http1::Builder::new()
            .serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            // A client that resets mid-answer ends its own connection, nobody else's.
            let _ = connection.await;
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(DRAIN, graceful.shutdown()).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_origin(origin: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::ORIGIN, origin.parse().unwrap());
        headers
    }

    #[test]
    fn only_this_machine_may_be_the_origin() {
        assert!(origin_allowed(&HeaderMap::new()));
        for ok in [
            "http://localhost:3000",
            "http://127.0.0.1",
            "http://[::1]:8080",
        ] {
            assert!(origin_allowed(&with_origin(ok)), "{ok}");
        }
        for bad in [
            "http://evil.example",
            "http://localhost.evil.example",
            "null",
            "http://127.0.0.2",
        ] {
            assert!(!origin_allowed(&with_origin(bad)), "{bad}");
        }
    }

    #[test]
    fn addresses_split_on_the_last_colon() {
        assert_eq!(
            split_address("127.0.0.1:6402").unwrap(),
            ("127.0.0.1".into(), 6402)
        );
        assert_eq!(split_address("[::1]:0").unwrap(), ("[::1]".into(), 0));
        assert!(split_address("6402").is_err());
        assert!(split_address(":80").is_err());
        assert!(split_address("host:port").is_err());
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_taken_port_names_its_holder_and_is_not_moved() {
        let first = bind("127.0.0.1:0").await.unwrap();
        let port = first.local.port();
        let err = bind(&format!("127.0.0.1:{port}"))
            .await
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.starts_with(&format!("127.0.0.1:{port} is already in use by ")),
            "{err}"
        );
        assert!(
            err.contains("pid ") || err.contains("unknown process"),
            "{err}"
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn serves_until_shutdown_and_refuses_foreign_origins() {
        use super::super::outbound::Outbound;
        let listening = bind("127.0.0.1:0").await.unwrap();
        let url = listening.url();
        let shutdown = Shutdown::new();
        let server = tokio::spawn(serve(
            listening.listener,
            shutdown.clone(),
            |request: Request<Incoming>| async move {
                if !origin_allowed(request.headers()) {
                    return forbidden_origin();
                }
                let (tx, body) = streaming(4);
                tokio::spawn(async move {
                    for part in ["data: 1\n\n", "data: 2\n\n"] {
                        let _ = tx.send(Bytes::from_static(part.as_bytes())).await;
                    }
                });
                Response::new(body)
            },
        ));
        let uri = super::super::outbound::parse_url(&url).unwrap();
        let client = Outbound::for_url(&uri).unwrap();
        let get = |origin: Option<&'static str>| {
            let mut request = Request::get(uri.clone());
            if let Some(origin) = origin {
                request = request.header(header::ORIGIN, origin);
            }
            request.body(Full::new(Bytes::new())).unwrap()
        };
        let answer = client.send(get(None)).await.unwrap();
        assert_eq!(answer.status(), StatusCode::OK);
        let body = answer.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(&body[..], b"data: 1\n\ndata: 2\n\n");
        let answer = client.send(get(Some("http://evil.example"))).await.unwrap();
        assert_eq!(answer.status(), StatusCode::FORBIDDEN);
        shutdown.trigger();
        server.await.unwrap();
        assert!(
            client.send(get(None)).await.is_err(),
            "the listener is closed after shutdown"
        );
    }
}
