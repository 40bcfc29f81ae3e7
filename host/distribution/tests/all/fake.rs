//! A fake, possibly hostile, registry: a `TcpListener` speaking just enough
//! HTTP/1.1 (one request per connection, `Connection: close`), answering
//! each request with what a handler says, and recording what it was asked
//! and how many body bytes it managed to send.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A request the fake received.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, …
    pub method: String,
    /// The path with its query.
    pub path: String,
    /// The headers, names in lower case.
    pub headers: Vec<(String, String)>,
}

impl Request {
    /// The value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// How to answer.
pub enum Reply {
    /// A whole body, with `Content-Length`.
    Full {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// `total` zero bytes, produced lazily in 64 KiB chunks (never
    /// allocated whole), with `Content-Length: length` when given (which
    /// may lie), chunked otherwise.
    Stream {
        status: u16,
        headers: Vec<(String, String)>,
        length: Option<u64>,
        total: u64,
    },
    /// `body`, announced whole in `Content-Length`, one byte every `every`.
    Drip {
        headers: Vec<(String, String)>,
        body: Vec<u8>,
        every: Duration,
    },
}

impl Reply {
    /// `200 OK` with `body` and a `Content-Type`.
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        Reply::Full {
            status: 200,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
        }
    }

    /// `status` with a short text body.
    pub fn status(status: u16, body: &str) -> Reply {
        Reply::Full {
            status,
            headers: vec![("Content-Type".into(), "text/plain".into())],
            body: body.as_bytes().to_vec(),
        }
    }
}

type Handler = Arc<dyn Fn(&Request) -> Reply + Send + Sync>;

/// A running fake registry; stops when dropped.
pub struct Fake {
    /// Where it listens (on the loopback, so spoken to in plain HTTP).
    pub addr: SocketAddr,
    requests: Arc<Mutex<Vec<Request>>>,
    streamed: Arc<Mutex<Vec<u64>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Fake {
    /// Starts a fake answering with `handler`.
    pub async fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let handler: Handler = Arc::new(handler);
        let requests = Arc::new(Mutex::new(Vec::new()));
        let streamed = Arc::new(Mutex::new(Vec::new()));
        let (r, s) = (requests.clone(), streamed.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (handler, r, s) = (handler.clone(), r.clone(), s.clone());
                tokio::spawn(async move {
                    let _ = serve(stream, handler, r, s).await;
                });
            }
        });
        Fake {
            addr,
            requests,
            streamed,
            task,
        }
    }

    /// `oci://ADDR/REPO_AND_TAG`.
    pub fn reference(&self, rest: &str) -> toolhost_distribution::OciReference {
        toolhost_distribution::OciReference::parse(&format!("oci://{}/{rest}", self.addr)).unwrap()
    }

    /// The requests so far.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// Whether a request's path contained `part`.
    pub fn asked(&self, part: &str) -> bool {
        self.requests().iter().any(|r| r.path.contains(part))
    }

    /// The body bytes a finished [`Reply::Stream`] managed to send, waiting
    /// (up to 20 s) for the stream to end once its client went away.
    pub async fn streamed(&self) -> u64 {
        for _ in 0..400 {
            if let Some(sent) = self.streamed.lock().unwrap().first() {
                return *sent;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the stream did not end: the client kept reading");
    }
}

async fn serve(
    mut stream: TcpStream,
    handler: Handler,
    requests: Arc<Mutex<Vec<Request>>>,
    streamed: Arc<Mutex<Vec<u64>>>,
) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await?;
        if n == 0 || head.len() > 64 << 10 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head).to_string();
    let mut lines = text.split("\r\n");
    let mut first = lines.next().unwrap_or_default().split(' ');
    let request = Request {
        method: first.next().unwrap_or_default().to_string(),
        path: first.next().unwrap_or_default().to_string(),
        headers: lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect(),
    };
    requests.lock().unwrap().push(request.clone());
    let reply = handler(&request);
    let head = |status: u16, headers: &[(String, String)], length: Option<u64>| {
        let mut h = format!("HTTP/1.1 {status} {}\r\nConnection: close\r\n", reason(status));
        for (n, v) in headers {
            h.push_str(&format!("{n}: {v}\r\n"));
        }
        match length {
            Some(l) => h.push_str(&format!("Content-Length: {l}\r\n")),
            None => h.push_str("Transfer-Encoding: chunked\r\n"),
        }
        h.push_str("\r\n");
        h.into_bytes()
    };
    match reply {
        Reply::Full {
            status,
            headers,
            body,
        } => {
            stream
                .write_all(&head(status, &headers, Some(body.len() as u64)))
                .await?;
            stream.write_all(&body).await?;
        }
        Reply::Stream {
            status,
            headers,
            length,
            total,
        } => {
            let mut sent = 0u64;
            let result = async {
                stream.write_all(&head(status, &headers, length)).await?;
                let chunk = vec![0u8; 64 << 10];
                while sent < total {
                    let n = chunk.len().min((total - sent) as usize);
                    if length.is_none() {
                        stream.write_all(format!("{n:x}\r\n").as_bytes()).await?;
                    }
                    stream.write_all(&chunk[..n]).await?;
                    if length.is_none() {
                        stream.write_all(b"\r\n").await?;
                    }
                    sent += n as u64;
                }
                if length.is_none() {
                    stream.write_all(b"0\r\n\r\n").await?;
                }
                std::io::Result::Ok(())
            }
            .await;
            streamed.lock().unwrap().push(sent);
            result?;
        }
        Reply::Drip { headers, body, every } => {
            stream
                .write_all(&head(200, &headers, Some(body.len() as u64)))
                .await?;
            for byte in body {
                stream.write_all(&[byte]).await?;
                tokio::time::sleep(every).await;
            }
        }
    }
    stream.shutdown().await
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        401 => "Unauthorized",
        404 => "Not Found",
        _ => "Whatever",
    }
}
