//! Outbound HTTP through the `http` plugin: only declared and granted
//! destinations, never loopback or private addresses unless named, redirects
//! re-checked, secrets injected host-side and redacted, budgets enforced.
//!
//! Every server here listens on 127.0.0.1 only; a refused request must never
//! reach one (each counts its connections).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use toolhost::internal::capabilities::Grants;
use toolhost::internal::http::{HttpGrant, SecretGrant};
use toolhost::{ErrorCode, LimitsOverride, LoadOptions, LoadedComponent};

use crate::{engine, support};

const SECRET: &str = "s3cr3t-token-0123456789";

/// A tiny HTTP/1.1 server on 127.0.0.1 that records what it receives.
struct Server {
    port: u16,
    connections: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (c, r) = (Arc::clone(&connections), Arc::clone(&requests));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                c.fetch_add(1, Ordering::SeqCst);
                let head = read_head(&mut stream);
                r.lock().unwrap().push(head.clone());
                respond(&mut stream, &head);
            }
        });
        Server {
            port,
            connections,
            requests,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn grant(&self) -> HttpGrant {
        HttpGrant::Url(format!("http://127.0.0.1:{}", self.port))
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

fn read_head(stream: &mut std::net::TcpStream) -> String {
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    while !data.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => data.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&data).into_owned()
}

fn respond(stream: &mut std::net::TcpStream, head: &str) {
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    let write = |stream: &mut std::net::TcpStream, status: &str, headers: &str, body: &[u8]| {
        let _ = write!(
            stream,
            "HTTP/1.1 {status}\r\nconnection: close\r\ncontent-length: {}\r\n{headers}\r\n",
            body.len()
        );
        let _ = stream.write_all(body);
    };
    if let Some(to) = path.strip_prefix("/redirect?to=") {
        write(stream, "302 Found", &format!("location: {to}\r\n"), b"");
    } else if path == "/echo" {
        // Echo the request back, in two writes that split the secret.
        let auth = head
            .lines()
            .find_map(|l| l.strip_prefix("authorization: "))
            .unwrap_or("")
            .to_string();
        let body = format!("you sent:\n{head}");
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-type: text/plain\r\nx-echo-auth: {auth}\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        let split = body.find(SECRET).map_or(body.len() / 2, |i| i + SECRET.len() / 2);
        let _ = stream.write_all(&body.as_bytes()[..split]);
        let _ = stream.flush();
        std::thread::sleep(Duration::from_millis(50));
        let _ = stream.write_all(&body.as_bytes()[split..]);
    } else if path == "/big" {
        write(
            stream,
            "200 OK",
            "content-type: text/plain\r\n",
            &vec![b'x'; 100_000],
        );
    } else if path == "/page" {
        write(
            stream,
            "200 OK",
            "content-type: text/html; charset=utf-8\r\n",
            PAGE.as_bytes(),
        );
    } else {
        write(stream, "200 OK", "content-type: text/plain\r\n", b"hello");
    }
}

const PAGE: &str = r#"<!doctype html><html><head><title>Test page</title>
<style>body { color: red }</style><script>alert("hi")</script></head>
<body class="main" style="margin:0"><h1>Welcome</h1>
<p>Go <a href="/home" class="btn">home</a> now.</p>
<form action="/search" method="post"><input type="text" name="q" placeholder="Search"><button>Go</button></form>
<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>
<ul><li>one</li><li>two</li></ul></body></html>"#;

async fn plugin(http: Vec<HttpGrant>, secrets: Vec<SecretGrant>) -> toolhost::Result<Arc<LoadedComponent>> {
    let options = LoadOptions {
        grants: Grants {
            http,
            secrets,
            ..Default::default()
        },
        ..Default::default()
    };
    engine()
        .load_file(&support::plugin_path("http-plugin"), options)
        .await
}

async fn request(
    c: &LoadedComponent,
    args: serde_json::Value,
    limits: LimitsOverride,
) -> toolhost::Result<serde_json::Value> {
    let outcome = c.call("http_request", &args.to_string(), &limits, None, 1).await;
    outcome
        .result
        .map(|output| serde_json::from_str(&output.content).unwrap())
}

async fn get(c: &LoadedComponent, url: &str) -> toolhost::Result<serde_json::Value> {
    request(c, serde_json::json!({ "url": url }), LimitsOverride::default()).await
}

fn denied(result: toolhost::Result<serde_json::Value>, code: &str, note: &str) {
    let err = result.expect_err("the request must be refused");
    assert_eq!(err.code(), ErrorCode::ToolFailed, "{}", err.message());
    assert!(err.message().contains(code), "no {code:?} in: {}", err.message());
    assert!(err.message().contains(note), "no {note:?} in: {}", err.message());
}

#[tokio::test]
async fn a_component_importing_http_without_a_grant_is_refused_at_load() {
    let err = plugin(Vec::new(), Vec::new()).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::CapabilityNotGranted);
    assert!(
        err.message().contains("wasi:http/outgoing-handler"),
        "{}",
        err.message()
    );
    assert!(err.message().contains("`http *`"), "{}", err.message());
}

#[tokio::test]
async fn a_granted_loopback_port_is_reachable_and_nothing_else_is() {
    let server = Server::start();
    let c = plugin(vec![server.grant()], Vec::new()).await.unwrap();
    let ok = get(&c, &server.url("/")).await.unwrap();
    assert_eq!(ok["status"], 200);
    assert_eq!(ok["body"], "hello");
    assert_eq!(server.connections(), 1);

    // Another scheme, another name for the same address, a public host.
    let other_port = server.port.wrapping_add(1);
    for url in [
        format!("https://127.0.0.1:{}/", server.port),
        format!("http://localhost:{}/", server.port),
        format!("http://127.0.0.1:{other_port}/"),
        "https://example.com/".to_string(),
    ] {
        denied(get(&c, &url).await, "HTTP-request-denied", "is not granted");
    }
    assert_eq!(server.connections(), 1, "a refused request reached the server");
}

#[tokio::test]
async fn loopback_and_private_addresses_need_an_explicit_grant() {
    let server = Server::start();
    // A wildcard grant for the port: any public host, but no loopback.
    let wildcard = HttpGrant::Url(format!("http://*:{}", server.port));
    let c = plugin(vec![wildcard], Vec::new()).await.unwrap();
    for url in [
        server.url("/"),
        format!("http://localhost:{}/", server.port),
        format!("http://[::ffff:127.0.0.1]:{}/", server.port),
        format!("http://10.0.0.1:{}/", server.port),
    ] {
        denied(get(&c, &url).await, "destination-IP-prohibited", "allow_private");
    }
    assert_eq!(server.connections(), 0);

    // Naming the host with allow_private lets it through.
    let named = HttpGrant::Detailed {
        url: format!("http://localhost:{}", server.port),
        allow_private: true,
        ca_file: None,
    };
    let c = plugin(vec![named], Vec::new()).await.unwrap();
    let ok = get(&c, &format!("http://localhost:{}/", server.port))
        .await
        .unwrap();
    assert_eq!(ok["status"], 200);
}

#[tokio::test]
async fn redirects_are_returned_as_is_or_followed_and_rechecked() {
    let server = Server::start();
    let target = Server::start();
    let c = plugin(
        vec![
            server.grant(),
            HttpGrant::Url(format!("http://*:{}", target.port)),
        ],
        Vec::new(),
    )
    .await
    .unwrap();
    let to_target = server.url(&format!("/redirect?to=http://127.0.0.1:{}/", target.port));
    let as_is = get(&c, &to_target).await.unwrap();
    assert_eq!(as_is["status"], 302);
    assert_eq!(
        as_is["headers"]["location"],
        format!("http://127.0.0.1:{}/", target.port)
    );

    let follow = |url: String| serde_json::json!({ "url": url, "follow_redirects": true });
    // To another loopback port: the hop is checked like any request.
    let hop = request(&c, follow(to_target), LimitsOverride::default()).await;
    denied(hop, "destination-IP-prohibited", "loopback");
    // To a private address: refused before connecting anywhere.
    let private = server.url(&format!("/redirect?to=http://10.0.0.1:{}/", target.port));
    denied(
        request(&c, follow(private), LimitsOverride::default()).await,
        "destination-IP-prohibited",
        "private (10.0.0.0/8)",
    );
    // To an ungranted host.
    let ungranted = server.url("/redirect?to=https://example.com/");
    denied(
        request(&c, follow(ungranted), LimitsOverride::default()).await,
        "HTTP-request-denied",
        "is not granted",
    );
    assert_eq!(target.connections(), 0, "a refused redirect reached its target");

    // A granted hop is followed.
    let same = server.url(&format!("/redirect?to=http://127.0.0.1:{}/", server.port));
    let followed = request(&c, follow(same), LimitsOverride::default())
        .await
        .unwrap();
    assert_eq!(followed["status"], 200);
    assert_eq!(followed["redirects"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn secrets_reach_the_server_but_never_the_guest() {
    // SAFETY: `set_var` is unsafe because a thread reading the environment
    // through libc at the same moment could see a torn update. Every reader in
    // this process goes through `std::env`, which serializes access with its
    // own lock, and no other test uses this name.
    unsafe { std::env::set_var("TOOLHOST_TEST_HTTP_SECRET", SECRET) };
    let server = Server::start();
    let secret = SecretGrant {
        name: "token".into(),
        value_env: "TOOLHOST_TEST_HTTP_SECRET".into(),
        header: "Authorization".into(),
        format: Some("Bearer {}".into()),
        hosts: vec![format!("http://127.0.0.1:{}", server.port)],
    };
    let c = plugin(vec![server.grant()], vec![secret]).await.unwrap();
    let args = serde_json::json!({
        "url": server.url("/echo"),
        "headers": { "Authorization": "Bearer from-the-guest" },
    });
    let result = request(&c, args, LimitsOverride::default()).await.unwrap();
    let seen = server.requests.lock().unwrap().join("\n");
    assert!(
        seen.contains(&format!("authorization: Bearer {SECRET}")),
        "{seen}"
    );
    assert!(
        !seen.contains("from-the-guest"),
        "the guest overrode the secret: {seen}"
    );

    let text = result.to_string();
    assert!(!text.contains(SECRET), "the secret reached the guest: {text}");
    assert_eq!(result["headers"]["x-echo-auth"], "Bearer [REDACTED]");
    assert!(
        result["body"]
            .as_str()
            .unwrap()
            .contains("authorization: Bearer [REDACTED]"),
        "{text}"
    );
}

#[tokio::test]
async fn request_and_byte_budgets_are_enforced() {
    let server = Server::start();
    let c = plugin(vec![server.grant()], Vec::new()).await.unwrap();
    let loop_url = server.url(&format!("/redirect?to={}", server.url("/redirect?to=/")));
    let two = LimitsOverride {
        http_requests: Some(2),
        ..Default::default()
    };
    let args = serde_json::json!({ "url": loop_url, "follow_redirects": true });
    denied(
        request(&c, args, two).await,
        "connection-limit-reached",
        "http_requests",
    );
    assert_eq!(server.connections(), 2);

    let small = LimitsOverride {
        http_response_bytes: Some(1000),
        ..Default::default()
    };
    let big = serde_json::json!({ "url": server.url("/big") });
    denied(
        request(&c, big, small).await,
        "body size exceeds limit",
        "http_response_bytes",
    );
    // The plugin's own cap truncates instead of failing.
    let capped = serde_json::json!({ "url": server.url("/big"), "max_response_bytes": 10 });
    let result = request(&c, capped, LimitsOverride::default()).await.unwrap();
    assert_eq!(result["truncated"], true);
    assert_eq!(result["body"], "xxxxxxxxxx");
}

#[tokio::test]
async fn html_is_rendered_as_compact_semantic_text() {
    let server = Server::start();
    let c = plugin(vec![server.grant()], Vec::new()).await.unwrap();
    let result = get(&c, &server.url("/page")).await.unwrap();
    assert_eq!(result["rendered"], true);
    let body = result["body"].as_str().unwrap();
    for kept in [
        "Title: Test page",
        "# Welcome",
        "Go [home](/home) now.",
        "[form POST /search]",
        "[input type=text name=\"q\" placeholder=\"Search\"]",
        "[button: Go]",
        "| a | b |",
        "| 1 | 2 |",
        "- one",
    ] {
        assert!(body.contains(kept), "{kept:?} missing from:\n{body}");
    }
    for dropped in ["alert", "color", "class", "margin"] {
        assert!(!body.contains(dropped), "{dropped:?} kept in:\n{body}");
    }
    let raw = request(
        &c,
        serde_json::json!({ "url": server.url("/page"), "render_html": false }),
        LimitsOverride::default(),
    )
    .await
    .unwrap();
    assert_eq!(raw["rendered"], false);
    assert!(raw["body"].as_str().unwrap().contains("<script>"));
}

/// A TLS server on 127.0.0.1 for `localhost`, its certificate issued by a
/// private CA; returns the port and the CA's PEM.
async fn tls_server() -> (u16, String) {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "toolhost test CA");
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["localhost".to_string()])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    let config =
        rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
            )
            .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let mut buf = vec![0u8; 4096];
                let mut head = Vec::new();
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = tls
                    .write_all(
                        b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 12\r\n\r\nhello, TLS!\n",
                    )
                    .await;
                let _ = tls.shutdown().await;
            });
        }
    });
    (port, ca.pem())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_to_a_private_ca_is_trusted_only_through_the_grants_ca_file() {
    let (port, ca_pem) = tls_server().await;
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("corp-ca.pem");
    std::fs::write(&ca_file, ca_pem).unwrap();
    let url = format!("https://localhost:{port}");
    let grant = |ca_file: Option<std::path::PathBuf>| HttpGrant::Detailed {
        url: url.clone(),
        allow_private: true,
        ca_file,
    };

    let pinned = plugin(vec![grant(Some(ca_file.clone()))], Vec::new())
        .await
        .unwrap();
    let ok = get(&pinned, &format!("{url}/")).await.unwrap();
    assert_eq!(ok["status"], 200, "{ok}");
    assert_eq!(ok["body"], "hello, TLS!\n");

    // With the public roots only, the private CA is not trusted.
    let public = plugin(vec![grant(None)], Vec::new()).await.unwrap();
    let err = get(&public, &format!("{url}/")).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolFailed, "{}", err.message());
    assert!(err.message().to_lowercase().contains("tls"), "{}", err.message());

    // A ca_file that holds no certificate is refused at load, by name.
    let bad = dir.path().join("not-a-cert.pem");
    std::fs::write(&bad, "hello").unwrap();
    let err = plugin(vec![grant(Some(bad))], Vec::new()).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Config, "{}", err.message());
    assert!(err.message().contains("not-a-cert.pem"), "{}", err.message());
}
