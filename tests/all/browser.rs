//! Debian's `chromium`, headless, driven over the Chrome DevTools Protocol
//! on a pipe (`--remote-debugging-pipe`: JSON messages ended by a NUL byte,
//! the browser reading commands on its fd 3 and writing answers and events
//! on its fd 4), so no WebSocket client nor port is needed. The browser is
//! `tests/setup`'s Debian package, never a download.
//!
//! What the tests need of it: open a page, run an expression in it, wait
//! for one to hold, click an element as a user does (mouse events at its
//! place), and take a screenshot.

use std::io::{BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

use crate::peers::{program, wait_until};

/// The generous bound on one command's answer (a failure guard, not a
/// measurement).
const ANSWER_LIMIT: Duration = Duration::from_secs(60);

/// A headless chromium with one page open.
pub(crate) struct Browser {
    child: Child,
    commands: ChildStdin,
    messages: Receiver<Value>,
    next_id: u64,
    /// The page's CDP session.
    session: String,
    /// Exceptions the page's scripts threw (`Runtime.exceptionThrown`).
    pub(crate) exceptions: Vec<Value>,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts chromium with a fresh profile and attaches to a blank page.
    pub(crate) fn start() -> Browser {
        let chromium = program("chromium", "chromium");
        let profile = tempfile::tempdir().unwrap();
        let log = std::fs::File::create(profile.path().join("chromium.log")).unwrap();
        // The shell hands the browser our pipes as its fds 3 and 4.
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(r#"exec "$0" "$@" 3<&0 4>&1 </dev/null >&2"#)
            .arg(&chromium)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--remote-debugging-pipe",
                "--window-size=1280,1800",
            ])
            .arg(format!(
                "--user-data-dir={}",
                profile.path().join("data").display()
            ))
            .arg("about:blank")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("start chromium (tests/setup installs Debian's chromium)");
        let commands = child.stdin.take().unwrap();
        let mut answers = BufReader::new(child.stdout.take().unwrap());
        let (send, messages) = channel();
        std::thread::spawn(move || {
            let mut pending = Vec::new();
            let mut chunk = [0u8; 64 << 10];
            loop {
                let n = match answers.read(&mut chunk) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                pending.extend_from_slice(&chunk[..n]);
                while let Some(end) = pending.iter().position(|b| *b == 0) {
                    let message: Vec<u8> = pending.drain(..=end).collect();
                    let Ok(value) = serde_json::from_slice::<Value>(&message[..end]) else {
                        continue;
                    };
                    if send.send(value).is_err() {
                        return;
                    }
                }
            }
        });
        let mut browser = Browser {
            child,
            commands,
            messages,
            next_id: 0,
            session: String::new(),
            exceptions: Vec::new(),
            _profile: profile,
        };
        let target = browser.send(None, "Target.createTarget", json!({"url": "about:blank"}));
        let target_id = target["targetId"].as_str().unwrap().to_string();
        let attached = browser.send(
            None,
            "Target.attachToTarget",
            json!({"targetId": target_id, "flatten": true}),
        );
        browser.session = attached["sessionId"].as_str().unwrap().to_string();
        browser.call("Page.enable", json!({}));
        browser.call("Runtime.enable", json!({}));
        browser
    }

    /// Sends `method` (to the page's session, or the browser's) and
    /// returns its result; panics on an error answer.
    fn send(&mut self, session: Option<String>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        self.commands.write_all(&bytes).expect("chromium takes a command");
        self.commands.flush().unwrap();
        let deadline = Instant::now() + ANSWER_LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = match self.messages.recv_timeout(left) {
                Ok(message) => message,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("chromium did not answer {method} in {ANSWER_LIMIT:?}")
                }
                Err(RecvTimeoutError::Disconnected) => panic!("chromium went away during {method}"),
            };
            if message["method"] == "Runtime.exceptionThrown" {
                self.exceptions.push(message["params"].clone());
            }
            if message["id"] == id {
                if let Some(error) = message.get("error") {
                    panic!("{method}: {error}");
                }
                return message["result"].clone();
            }
        }
    }

    /// Sends `method` to the page.
    pub(crate) fn call(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.send(Some(session), method, params)
    }

    /// Opens `url` and waits for the page to have loaded.
    pub(crate) fn open(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url}));
        self.wait_for("the page loaded", "document.readyState === 'complete'");
    }

    /// The value of `expression` in the page (promises awaited); panics
    /// when it throws.
    pub(crate) fn eval(&mut self, expression: &str) -> Value {
        let answer = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        if let Some(thrown) = answer.get("exceptionDetails") {
            panic!("{expression} threw: {thrown}");
        }
        answer["result"]["value"].clone()
    }

    /// Waits until `expression` is true in the page.
    pub(crate) fn wait_for(&mut self, what: &str, expression: &str) {
        wait_until(what, || self.eval(expression) == json!(true));
    }

    /// Clicks the element `selector` finds, as a person does: the mouse
    /// moved to its middle, pressed and released.
    pub(crate) fn click(&mut self, selector: &str) {
        let quoted = serde_json::to_string(selector).unwrap();
        let place = self.eval(&format!(
            "(() => {{ const e = document.querySelector({quoted}); if (!e) return null; \
             e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); \
             return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
        ));
        let (Some(x), Some(y)) = (place[0].as_f64(), place[1].as_f64()) else {
            panic!("nothing on the page matches {selector}");
        };
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            );
        }
    }

    /// Writes a PNG of the whole page to `path`.
    pub(crate) fn screenshot(&mut self, path: &Path) {
        let shot = self.call(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true}),
        );
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap();
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let mut bytes = json!({"id": 0, "method": "Browser.close"})
            .to_string()
            .into_bytes();
        bytes.push(0);
        let _ = self.commands.write_all(&bytes);
        let _ = self.commands.flush();
        // A moment to close its profile and helpers, then for sure.
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline && matches!(self.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
