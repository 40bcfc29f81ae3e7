//! Real distribution peers, started by the tests on loopback ports and
//! stopped when dropped: Debian's `docker-registry` (the CNCF distribution
//! server), `minisign` and `haproxy`. A missing peer fails the test with a
//! message naming `tests/setup`, which installs them.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The generous bound on waiting for a peer to come up (a failure guard,
/// not a measurement).
const START_LIMIT: Duration = Duration::from_secs(60);

/// The path of program `name`, or a panic naming `tests/setup`.
pub fn program(name: &str, package: &str) -> PathBuf {
    for dir in ["/usr/bin", "/usr/sbin", "/usr/local/bin", "/bin", "/sbin"] {
        let path = Path::new(dir).join(name);
        if path.exists() {
            return path;
        }
    }
    panic!(
        "`{name}` (Debian package {package}) is not installed: run tests/setup, which installs the test peers"
    );
}

/// A free loopback port (bound, then released for the peer to take).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Sends a bodiless HTTP/1.1 request and returns the status code, or `None`
/// when nothing answers.
pub fn http_status(addr: SocketAddr, method: &str, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).ok()?;
    String::from_utf8_lossy(&head[9..12]).parse().ok()
}

/// Waits until `ready` or the start limit, then panics with `what`.
pub fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < START_LIMIT,
            "{what} did not happen within {START_LIMIT:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A `docker-registry serve` on a loopback port, storing in a temp folder.
pub struct Registry {
    child: Option<Child>,
    /// Its address.
    pub addr: SocketAddr,
    /// Its filesystem storage folder.
    pub storage: PathBuf,
    dir: tempfile::TempDir,
    auth: bool,
}

impl Registry {
    /// Starts one on a free port and waits until `/v2/` answers.
    pub fn start() -> Registry {
        Registry::start_with(None)
    }

    /// Starts one that needs `user` and `password` (HTTP basic, htpasswd).
    pub fn start_with_login(user: &str, password: &str) -> Registry {
        Registry::start_with(Some((user, password)))
    }

    fn start_with(login: Option<(&str, &str)>) -> Registry {
        let dir = tempfile::tempdir().unwrap();
        let storage = dir.path().join("storage");
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        if let Some((user, password)) = login {
            // The registry takes bcrypt hashes only: Python's crypt makes one.
            let out = Command::new("python3")
                .args([
                    "-W",
                    "ignore",
                    "-c",
                    "import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH)))",
                    password,
                ])
                .output()
                .expect("run python3 to hash the registry password");
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let hash = String::from_utf8_lossy(&out.stdout).trim().to_string();
            std::fs::write(dir.path().join("htpasswd"), format!("{user}:{hash}\n")).unwrap();
        }
        let mut registry = Registry {
            child: None,
            addr,
            storage,
            dir,
            auth: login.is_some(),
        };
        registry.restart();
        registry
    }

    /// `oci://HOST:PORT/REPO`.
    pub fn reference(&self, repo_and_tag: &str) -> String {
        format!("oci://{}/{repo_and_tag}", self.addr)
    }

    /// Stops it (the port then refuses connections).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port and storage.
    pub fn restart(&mut self) {
        self.stop();
        let config = self.dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {}\n{}",
                self.storage.display(),
                self.addr,
                if self.auth {
                    format!("auth:\n  htpasswd:\n    realm: toolhost-test\n    path: {}\n", self.dir.path().join("htpasswd").display())
                } else {
                    String::new()
                }
            ),
        )
        .unwrap();
        let log = self.dir.path().join("registry.log");
        let child = Command::new(program("docker-registry", "docker-registry"))
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start docker-registry");
        self.child = Some(child);
        let addr = self.addr;
        // With a login, /v2/ answers 401 until one is given.
        let ready = if self.auth { 401 } else { 200 };
        let start = Instant::now();
        while http_status(addr, "GET", "/v2/") != Some(ready) {
            let exited = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten());
            if exited.is_some() || start.elapsed() > START_LIMIT {
                panic!(
                    "the registry did not answer /v2/ ({exited:?}): {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The files holding the blob with `digest` (`sha256:HEX`).
    pub fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").unwrap();
        self.storage
            .join("docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs Debian's `minisign` with `args` in `dir` and returns its stdout;
/// panics with its output when it fails.
pub fn minisign(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(program("minisign", "minisign"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run minisign");
    assert!(
        out.status.success(),
        "minisign {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A key pair made by `minisign -G -W` (no password) in `dir`: (public,
/// secret) paths, and the key ID as minisign prints it.
pub fn minisign_keypair(dir: &Path, name: &str) -> (PathBuf, PathBuf, String) {
    let (public, secret) = (dir.join(format!("{name}.pub")), dir.join(format!("{name}.key")));
    minisign(
        dir,
        &[
            "-G",
            "-W",
            "-f",
            "-p",
            public.to_str().unwrap(),
            "-s",
            secret.to_str().unwrap(),
        ],
    );
    let text = std::fs::read_to_string(&public).unwrap();
    let id = text
        .lines()
        .next()
        .and_then(|l| l.rsplit(' ').next())
        .expect("a minisign public key names its key ID")
        .to_string();
    (public, secret, id)
}

/// Sends an HTTP/1.1 request with `body` and returns the status code and
/// the response body (the connection is closed by the request).
pub fn http_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(60))).ok()?;
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).ok()?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).ok()?;
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text.get(9..12)?.parse().ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    let body = if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        dechunk(body)
    } else {
        body.to_string()
    };
    Some((status, body))
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// The same component with a custom section appended: other bytes (so
/// another hash), the same tools. What a rebuilt plugin looks like.
pub fn new_version(bytes: &[u8], label: &str) -> Vec<u8> {
    fn leb(mut n: usize, out: &mut Vec<u8>) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }
    let name = b"toolhost-test-version";
    let mut payload = Vec::new();
    leb(name.len(), &mut payload);
    payload.extend_from_slice(name);
    payload.extend_from_slice(label.as_bytes());
    let mut out = bytes.to_vec();
    out.push(0);
    leb(payload.len(), &mut out);
    out.extend_from_slice(&payload);
    out
}

/// Runs the toolhost binary with `args` (the tests' compile cache added
/// for the commands that load components) and returns its exit success and
/// its stdout parsed as JSON (`null` when it is not JSON).
pub fn toolhost(args: &[&str], env: &[(&str, &str)]) -> (bool, serde_json::Value, String) {
    let mut cmd = Command::new(crate::support::toolhost_bin());
    cmd.args(args).stdin(Stdio::null());
    if matches!(args.first(), Some(&"tools") | Some(&"serve")) {
        cmd.arg("--cache-dir").arg(crate::support::cache_dir());
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run toolhost");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let json = serde_json::from_str(&stdout).unwrap_or(serde_json::Value::Null);
    (
        out.status.success(),
        json,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A `haproxy` in the foreground on a loopback port, balancing HTTP over
/// `backends` with health checks on `/healthz`, retrying a request whose
/// replica refused or dropped it on another one.
pub struct Haproxy {
    child: Child,
    /// Its address.
    pub addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Haproxy {
    /// Starts one and waits until it answers.
    pub fn start(backends: &[SocketAddr]) -> Haproxy {
        let dir = tempfile::tempdir().unwrap();
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let servers: String = backends
            .iter()
            .enumerate()
            .map(|(i, b)| format!("  server r{i} {b} check\n"))
            .collect();
        let config = format!(
            "global\n  maxconn 256\n\
             defaults\n  mode http\n  timeout connect 2s\n  timeout client 60s\n  timeout server 60s\n  \
             option http-buffer-request\n  retries 3\n  option redispatch 1\n  \
             retry-on conn-failure empty-response response-timeout 503\n\
             frontend mcp\n  bind {addr}\n  default_backend replicas\n\
             backend replicas\n  balance roundrobin\n  option httpchk GET /healthz\n  http-check expect status 200\n  \
             default-server inter 200ms fall 1 rise 1\n{servers}"
        );
        let path = dir.path().join("haproxy.cfg");
        std::fs::write(&path, config).unwrap();
        let child = Command::new(program("haproxy", "haproxy"))
            .arg("-f")
            .arg(&path)
            .arg("-db")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start haproxy");
        let haproxy = Haproxy {
            child,
            addr,
            _dir: dir,
        };
        wait_until("haproxy answering /healthz", || {
            http_status(addr, "GET", "/healthz") == Some(200)
        });
        haproxy
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
