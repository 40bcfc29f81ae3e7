//! # Sealed request state (MCP 2026-07-28 multi-round-trip results)
//!
//! A 2026-07-28 server that needs something from the client (its user's
//! answer, its model's completion, an approval) answers the request with an
//! `InputRequiredResult` carrying an opaque `requestState`; the client
//! retries the same request with its answers and that state echoed back,
//! and the retry may reach any replica. The state is therefore the only
//! memory of the exchange, and it comes back from the client: it is sealed
//! here, not trusted.
//!
//! | what | where |
//! |---|---|
//! | the replicas' shared secret | [`StateKey`] (`[mcp] state_key_file`, `TOOLHOST_MCP_STATE_KEY`) |
//! | what a state is bound to | [`Binding`]: method, name, a digest of the arguments, the caller |
//! | the answers carried, the questions pending | [`Answer`], [`Asked`] |
//! | sealing and opening, each state once | [`StateSealer`] |
//! | why a state is refused | [`StateError`], a JSON-RPC `-32602` |
//!
//! A sealed state is `th1.KID.PAYLOAD.TAG`: the version, the key's public
//! identifier, the JSON payload (base64url) and a keyed BLAKE3 hash of the
//! three. The payload holds the binding, the answers collected so far (each
//! with the fingerprint of its question), the questions now pending, when
//! it was issued, when it expires and a random nonce. It is signed, not
//! encrypted: nothing secret goes in it (an answer is the client's own).
//!
//! Opening checks, in order: the format and version, the key (a state
//! sealed by another key is refused as such), the tag (a changed byte is
//! refused), the expiry, the binding (a state is good for the request it
//! was issued for only), and last the nonce, claimed in the shared
//! [`Store`] for the state's remaining lifetime: a state opens once, on
//! whichever replica sees it first.
//!
//! ```
//! # async fn demo() -> Result<(), toolhost_mcp::request_state::StateError> {
//! use std::sync::Arc;
//! use serde_json::json;
//! use toolhost_mcp::request_state::{Binding, StateKey, StateSealer};
//! use toolhost_mcp::store::MemoryStore;
//!
//! let key = StateKey::from_secret(&[7; 32]).unwrap();
//! let sealer = StateSealer::new(key, Arc::new(MemoryStore::new()));
//! let binding = Binding::new("tools/call", "exec", &json!({"command": "ls"}), "caller");
//! let state = sealer.seal(&binding, &[], &[]);
//! assert!(sealer.open(&state, &binding).await.is_ok());
//! // Each state opens once.
//! assert!(sealer.open(&state, &binding).await.is_err());
//! # Ok(()) }
//! ```

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::ErrorData;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::store::{Store, StoreError};

/// The format of the states sealed here; a state of another version is
/// refused (replicas of different versions do not continue each other's
/// exchanges).
pub const STATE_VERSION: &str = "th1";

/// How long a state stays good by default: a person answering a question
/// may take a while, a state left lying about should not last.
pub const DEFAULT_STATE_TTL: Duration = Duration::from_secs(600);

/// The environment variable a state key may come from (at least 32 bytes).
pub const STATE_KEY_ENV: &str = "TOOLHOST_MCP_STATE_KEY";

/// The fewest bytes of secret a key is made from.
pub const MIN_SECRET_BYTES: usize = 32;

/// The largest sealed state opened; a longer one is refused before any
/// work (a state carries a few answers, not megabytes).
pub const MAX_STATE_BYTES: usize = 1 << 20;

/// What the MAC is keyed by, derived from the operator's secret. Replicas
/// that continue each other's exchanges need the same secret.
#[derive(Clone)]
pub struct StateKey {
    mac: [u8; 32],
    id: String,
}

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The identifier only: it is public (it travels in every state).
        f.debug_struct("StateKey")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// Why a state key could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateKeyError {
    /// The secret is shorter than [`MIN_SECRET_BYTES`].
    #[error("a request-state key needs at least {MIN_SECRET_BYTES} bytes of secret, not {len}")]
    TooShort {
        /// Its length.
        len: usize,
    },
    /// The key file could not be read.
    #[error("cannot read the request-state key file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

impl StateKey {
    /// The key made from `secret` (at least [`MIN_SECRET_BYTES`] bytes; the
    /// same secret gives the same key on every replica).
    ///
    /// # Errors
    ///
    /// [`StateKeyError::TooShort`].
    pub fn from_secret(secret: &[u8]) -> Result<StateKey, StateKeyError> {
        if secret.len() < MIN_SECRET_BYTES {
            return Err(StateKeyError::TooShort { len: secret.len() });
        }
        Ok(StateKey::derived(secret))
    }

    /// The MAC key and the public identifier, each derived from `secret`
    /// in its own context (the identifier tells nothing of the MAC key).
    fn derived(secret: &[u8]) -> StateKey {
        let mac = blake3::derive_key("toolhost 2026 MCP request state MAC key", secret);
        let id = blake3::derive_key("toolhost 2026 MCP request state key id", secret);
        StateKey {
            mac,
            id: URL_SAFE_NO_PAD.encode(&id[..9]),
        }
    }

    /// The key made from the contents of `path`, less surrounding
    /// whitespace (a file written by `head -c 48 /dev/urandom | base64`
    /// works as is).
    ///
    /// # Errors
    ///
    /// [`StateKeyError::Read`], or [`StateKeyError::TooShort`].
    pub fn from_file(path: &Path) -> Result<StateKey, StateKeyError> {
        let bytes = std::fs::read(path).map_err(|source| StateKeyError::Read {
            path: path.display().to_string(),
            source,
        })?;
        StateKey::from_secret(bytes.trim_ascii())
    }

    /// The operator's key: from `file` (`[mcp] state_key_file`) if given,
    /// else from [`STATE_KEY_ENV`]; `None` when neither is set.
    ///
    /// # Errors
    ///
    /// As [`StateKey::from_file`] and [`StateKey::from_secret`].
    pub fn configured(file: Option<&Path>) -> Result<Option<StateKey>, StateKeyError> {
        match (file, std::env::var_os(STATE_KEY_ENV)) {
            (Some(file), _) => StateKey::from_file(file).map(Some),
            (None, Some(secret)) => StateKey::from_secret(secret.as_encoded_bytes()).map(Some),
            (None, None) => Ok(None),
        }
    }

    /// A key of this process only: its states are good on this replica and
    /// until it restarts.
    pub fn random() -> StateKey {
        let mut secret = [0u8; 32];
        if getrandom::fill(&mut secret).is_err() {
            // No system randomness: a key nobody else can know still comes
            // from this process's own state (time and address), hashed.
            let seed = format!("{:?}{:p}", SystemTime::now(), &secret);
            secret = *blake3::hash(seed.as_bytes()).as_bytes();
        }
        StateKey::derived(&secret)
    }

    /// The key's public identifier, as carried in its states.
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// What a state is good for: the request it was issued for, and who made
/// it. A retry must match it exactly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    /// The JSON-RPC method (`tools/call`, `prompts/get`, `resources/read`).
    pub method: String,
    /// The tool's or prompt's name, or the resource's URI.
    pub name: String,
    /// A digest of the arguments (canonical JSON: keys sorted).
    pub arguments: String,
    /// A digest of who asked (see `round_trip::caller`).
    pub caller: String,
}

impl Binding {
    /// The binding of a request of `method` for `name` with `arguments`,
    /// made by `caller`.
    pub fn new(method: &str, name: &str, arguments: &Value, caller: &str) -> Binding {
        Binding {
            method: method.to_string(),
            name: name.to_string(),
            arguments: digest(&canonical(arguments)),
            caller: digest(caller),
        }
    }
}

/// An answer carried from round to round: the question's key and
/// fingerprint, and what the client answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// The position of its question in the run (0 for the first asked).
    pub at: usize,
    /// The key of the input request it answered.
    pub key: String,
    /// The fingerprint of the question (see [`fingerprint`]).
    pub fingerprint: String,
    /// The client's response, as it sent it (checked when it came in).
    pub response: Value,
}

/// A question sent to the client and not answered yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Asked {
    /// The position of the question in the run.
    pub at: usize,
    /// The key of its input request.
    pub key: String,
    /// Its fingerprint.
    pub fingerprint: String,
}

/// The fingerprint of a question: a digest of its kind and its canonical
/// JSON. A re-run that asks something else is told apart by it.
pub fn fingerprint(kind: &str, question: &Value) -> String {
    digest(&format!("{kind}\n{}", canonical(question)))
}

/// `value` as JSON with every object's keys sorted, so that two equal
/// values give one text whatever order their keys came in.
pub fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&map[k]))).collect())
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

fn digest(text: &str) -> String {
    URL_SAFE_NO_PAD.encode(&blake3::hash(text.as_bytes()).as_bytes()[..18])
}

/// What a state carries.
#[derive(Debug, Serialize, Deserialize)]
struct Payload {
    binding: Binding,
    answers: Vec<Answer>,
    pending: Vec<Asked>,
    /// Issued at, in Unix milliseconds.
    iat: u64,
    /// Expires at, in Unix milliseconds.
    exp: u64,
    nonce: String,
}

/// What an opened state says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Opened {
    /// The answers collected in the earlier rounds, in the order the
    /// questions were asked.
    pub answers: Vec<Answer>,
    /// The questions the last round asked.
    pub pending: Vec<Asked>,
}

/// Why a `requestState` was refused. Each is a JSON-RPC `-32602` naming
/// the reason ([`StateError::to_error_data`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// Not a state this server seals (another format or version, or not
    /// decodable).
    #[error("requestState is not a state this server issued ({0})")]
    Malformed(&'static str),
    /// Sealed with another key: another deployment's state, or replicas
    /// that do not share `state_key_file`.
    #[error(
        "requestState was sealed with another key (key id {0}); replicas must share one key ([mcp] state_key_file)"
    )]
    OtherKey(String),
    /// The tag does not match: the state was changed.
    #[error("requestState failed its integrity check: it was altered")]
    Tampered,
    /// Past its lifetime.
    #[error("requestState has expired; call again without it")]
    Expired,
    /// Issued for another request (method, name, arguments or caller).
    #[error("requestState was issued for another request: its {0} differs")]
    Bound(&'static str),
    /// Already used once.
    #[error("requestState was already used; each state is good for one retry")]
    Replayed,
    /// The store that records each state's single use failed: refused,
    /// since the use could not be recorded.
    #[error("requestState cannot be checked for reuse: {0}")]
    Store(#[from] StoreError),
}

impl StateError {
    /// A short name of the reason, for `data.reason` and logs.
    pub fn reason(&self) -> &'static str {
        match self {
            StateError::Malformed(_) => "malformed",
            StateError::OtherKey(_) => "other_key",
            StateError::Tampered => "tampered",
            StateError::Expired => "expired",
            StateError::Bound(_) => "bound_elsewhere",
            StateError::Replayed => "replayed",
            StateError::Store(_) => "store_unavailable",
        }
    }

    /// The JSON-RPC error the client gets: `-32602` (invalid params) with
    /// the reason in the message and as `data.reason`.
    pub fn to_error_data(&self) -> ErrorData {
        ErrorData::invalid_params(
            self.to_string(),
            Some(serde_json::json!({ "reason": self.reason() })),
        )
    }
}

/// Seals and opens request states with one key, recording each state's
/// single use in a shared [`Store`].
#[derive(Debug, Clone)]
pub struct StateSealer {
    key: StateKey,
    ttl: Duration,
    store: Arc<dyn Store>,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl StateSealer {
    /// A sealer with `key`, recording used states in `store`; states last
    /// [`DEFAULT_STATE_TTL`].
    pub fn new(key: StateKey, store: Arc<dyn Store>) -> StateSealer {
        StateSealer {
            key,
            ttl: DEFAULT_STATE_TTL,
            store,
        }
    }

    /// The same sealer, its states lasting `ttl`.
    pub fn with_ttl(mut self, ttl: Duration) -> StateSealer {
        self.ttl = ttl;
        self
    }

    /// The key's public identifier.
    pub fn key_id(&self) -> &str {
        self.key.id()
    }

    /// The store states' single use is recorded in (shared with the
    /// session approvals of 2026-07-28 clients).
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    fn tag(&self, signed: &str) -> blake3::Hash {
        blake3::keyed_hash(&self.key.mac, signed.as_bytes())
    }

    /// A new state for the request `binding` describes, carrying `answers`
    /// and the `pending` questions.
    pub fn seal(&self, binding: &Binding, answers: &[Answer], pending: &[Asked]) -> String {
        let iat = now_ms();
        let ttl = u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX);
        let mut nonce = [0u8; 16];
        if getrandom::fill(&mut nonce).is_err() {
            // Unique still: the time, the binding and a process-wide count.
            static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let seed = format!("{iat}{n}{}{:?}", binding.caller, SystemTime::now());
            nonce.copy_from_slice(&blake3::hash(seed.as_bytes()).as_bytes()[..16]);
        }
        let payload = Payload {
            binding: binding.clone(),
            answers: answers.to_vec(),
            pending: pending.to_vec(),
            iat,
            exp: iat.saturating_add(ttl),
            nonce: URL_SAFE_NO_PAD.encode(nonce),
        };
        // Serializing plain strings, numbers and JSON values cannot fail.
        let json = serde_json::to_vec(&payload).unwrap_or_default();
        let signed = format!("{STATE_VERSION}.{}.{}", self.key.id, URL_SAFE_NO_PAD.encode(json));
        let tag = URL_SAFE_NO_PAD.encode(self.tag(&signed).as_bytes());
        format!("{signed}.{tag}")
    }

    /// Opens `state` for the request `binding` describes, and records its
    /// use: it will not open again, here or on any replica sharing the
    /// store.
    ///
    /// # Errors
    ///
    /// A [`StateError`] naming why the state is refused.
    pub async fn open(&self, state: &str, binding: &Binding) -> Result<Opened, StateError> {
        let payload = self.verify(state)?;
        let now = now_ms();
        if now >= payload.exp {
            return Err(StateError::Expired);
        }
        let b = &payload.binding;
        for (what, differs) in [
            ("method", b.method != binding.method),
            ("name", b.name != binding.name),
            ("arguments", b.arguments != binding.arguments),
            ("caller", b.caller != binding.caller),
        ] {
            if differs {
                return Err(StateError::Bound(what));
            }
        }
        let left = Duration::from_millis(payload.exp - now);
        let claimed = self
            .store
            .put_new(&format!("mcp:state-nonce:{}", payload.nonce), b"1", left)
            .await?;
        if !claimed {
            return Err(StateError::Replayed);
        }
        Ok(Opened {
            answers: payload.answers,
            pending: payload.pending,
        })
    }

    /// The payload of `state` if this key sealed it unchanged.
    fn verify(&self, state: &str) -> Result<Payload, StateError> {
        if state.len() > MAX_STATE_BYTES {
            return Err(StateError::Malformed("too long"));
        }
        let mut parts = state.split('.');
        let (Some(version), Some(kid), Some(body), Some(tag), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return Err(StateError::Malformed("not four dot-separated parts"));
        };
        if version != STATE_VERSION {
            return Err(StateError::Malformed("another format version"));
        }
        if kid != self.key.id {
            let mut shown = kid.to_string();
            toolhost_core::text::truncate_utf8(&mut shown, 24);
            return Err(StateError::OtherKey(shown));
        }
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .ok()
            .and_then(|t| <[u8; 32]>::try_from(t).ok())
            .ok_or(StateError::Tampered)?;
        let signed = &state[..state.len() - tag_len(state)];
        // blake3::Hash compares in constant time.
        if self.tag(signed) != blake3::Hash::from(tag) {
            return Err(StateError::Tampered);
        }
        let json = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| StateError::Malformed("payload not base64url"))?;
        serde_json::from_slice(&json).map_err(|_| StateError::Malformed("payload not a state"))
    }
}

/// The length of `state`'s last part and the dot before it.
fn tag_len(state: &str) -> usize {
    state.rfind('.').map_or(0, |dot| state.len() - dot)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;
    use serde_json::json;

    fn sealer(secret: u8) -> StateSealer {
        StateSealer::new(
            StateKey::from_secret(&[secret; 32]).unwrap(),
            Arc::new(MemoryStore::new()),
        )
    }

    fn binding() -> Binding {
        Binding::new(
            "tools/call",
            "exec",
            &json!({"command": "touch x", "cwd": "/w"}),
            "alice",
        )
    }

    #[tokio::test]
    async fn a_state_opens_once_with_its_answers() {
        let s = sealer(1);
        let answers = [Answer {
            at: 0,
            key: "approval".into(),
            fingerprint: "fp".into(),
            response: json!({"action": "accept"}),
        }];
        let state = s.seal(&binding(), &answers, &[]);
        let opened = s.open(&state, &binding()).await.unwrap();
        assert_eq!(opened.answers, answers);
        assert!(matches!(
            s.open(&state, &binding()).await,
            Err(StateError::Replayed)
        ));
    }

    #[tokio::test]
    async fn argument_order_does_not_matter() {
        let s = sealer(1);
        let state = s.seal(&binding(), &[], &[]);
        let same = Binding::new(
            "tools/call",
            "exec",
            &json!({"cwd": "/w", "command": "touch x"}),
            "alice",
        );
        assert!(s.open(&state, &same).await.is_ok());
    }

    #[tokio::test]
    async fn a_changed_state_is_refused() {
        let s = sealer(1);
        let state = s.seal(&binding(), &[], &[]);
        let mut bytes = state.into_bytes();
        let middle = bytes.len() / 2;
        bytes[middle] = if bytes[middle] == b'A' { b'B' } else { b'A' };
        let changed = String::from_utf8(bytes).unwrap();
        let e = s.open(&changed, &binding()).await.unwrap_err();
        assert!(
            matches!(e, StateError::Tampered | StateError::Malformed(_)),
            "{e}"
        );
        assert_eq!(e.to_error_data().code.0, -32602);
    }

    #[test]
    fn a_short_secret_is_refused() {
        assert!(matches!(
            StateKey::from_secret(b"short"),
            Err(StateKeyError::TooShort { len: 5 })
        ));
    }
}
