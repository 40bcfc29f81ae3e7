//! Registry credentials: from the environment or the Docker config file,
//! never from the command line or the toolhost config.
//!
//! In order:
//! 1. `TOOLHOST_REGISTRY_USERNAME` and `TOOLHOST_REGISTRY_PASSWORD` (both
//!    set): HTTP basic credentials for every registry this process talks to
//!    (a Kubernetes secret mounted as environment variables, say);
//! 2. the Docker config file, `$DOCKER_CONFIG/config.json` or
//!    `~/.docker/config.json`, as `docker login` writes it: an `auths` entry
//!    for the registry (`auth`, or `username` and `password`), or a
//!    credential helper (`credHelpers`, `credsStore`), read by the
//!    `docker_credential` crate;
//! 3. otherwise anonymous.
//!
//! The Docker config file is read through
//! [`toolhost_core::bounded::read_file`] (at most
//! [`MAX_DOCKER_CONFIG_BYTES`], a regular file only). A credential helper
//! it names is a program the operator installed; the `docker_credential`
//! crate runs it and reads its answer without a bound, which is left as it
//! is: the helper is as trusted as the operator's own shell.

use docker_credential::{CredentialRetrievalError, DockerCredential};
use oci_client::secrets::RegistryAuth;

use crate::error::{DistributionError, ErrorKind, Result};

/// The environment variable holding the registry user name.
pub const USERNAME_ENV: &str = "TOOLHOST_REGISTRY_USERNAME";
/// The environment variable holding the registry password (or token).
pub const PASSWORD_ENV: &str = "TOOLHOST_REGISTRY_PASSWORD";

/// The most bytes read of the Docker config file (`config.json`): far more
/// than any `docker login` writes, small enough to hold in memory.
pub const MAX_DOCKER_CONFIG_BYTES: u64 = 1 << 20;

/// The credentials for `registry` (`HOST[:PORT]`).
///
/// # Errors
///
/// [`ErrorKind::Credentials`] when only one of the two variables is set,
/// when the Docker config file exists but cannot be parsed, when its
/// credential helper fails, when it holds only an identity token (an
/// OAuth refresh token, which this client cannot use), and when it is not
/// a regular file or holds more than [`MAX_DOCKER_CONFIG_BYTES`].
///
/// Blocking (it reads a file and may run a credential helper): the pull
/// calls it on tokio's blocking pool.
pub fn credentials(registry: &str) -> Result<RegistryAuth> {
    let var = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
    let docker_config = std::env::var_os("DOCKER_CONFIG")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| std::path::Path::new(&home).join(".docker")));
    resolve(
        registry,
        var(USERNAME_ENV),
        var(PASSWORD_ENV),
        docker_config.as_deref(),
    )
}

/// [`credentials`] from explicit sources: the two variables' values and the
/// Docker config folder.
fn resolve(
    registry: &str,
    user: Option<String>,
    password: Option<String>,
    docker_config: Option<&std::path::Path>,
) -> Result<RegistryAuth> {
    match (user, password) {
        (Some(user), Some(password)) => return Ok(RegistryAuth::Basic(user, password)),
        (None, None) => {}
        _ => {
            return Err(DistributionError::new(
                ErrorKind::Credentials,
                format!("set both {USERNAME_ENV} and {PASSWORD_ENV}, or neither"),
            ));
        }
    }
    let Some(file) = docker_config.map(|dir| dir.join("config.json")) else {
        return Ok(RegistryAuth::Anonymous);
    };
    // Bounded: the path comes from the environment and may name a pipe, a
    // device or a file that never ends.
    let text = match toolhost_core::bounded::read_file(&file, MAX_DOCKER_CONFIG_BYTES) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(RegistryAuth::Anonymous),
        Err(e) => {
            return Err(DistributionError::new(
                ErrorKind::Credentials,
                format!(
                    "cannot read {} (at most {MAX_DOCKER_CONFIG_BYTES} bytes, a regular file): {e}",
                    file.display()
                ),
            ));
        }
    };
    match docker_credential::get_credential_from_reader(std::io::Cursor::new(text), registry) {
        Ok(DockerCredential::UsernamePassword(user, password)) => Ok(RegistryAuth::Basic(user, password)),
        Ok(DockerCredential::IdentityToken(_)) => Err(DistributionError::new(
            ErrorKind::Credentials,
            format!(
                "{} holds only an identity token for {registry}, which toolhost cannot use; log in with a user name and password, or set {USERNAME_ENV} and {PASSWORD_ENV}",
                file.display()
            ),
        )),
        Err(CredentialRetrievalError::NoCredentialConfigured) => Ok(RegistryAuth::Anonymous),
        Err(e) => Err(DistributionError::new(
            ErrorKind::Credentials,
            format!(
                "reading the credentials for {registry} from {}: {e}",
                file.display()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_then_the_docker_config_then_anonymous() {
        let dir = tempfile::tempdir().unwrap();
        let none = resolve("r.example:5000", None, None, Some(dir.path())).unwrap();
        assert_eq!(none, RegistryAuth::Anonymous);
        // `docker login` writes base64("user:password").
        std::fs::write(
            dir.path().join("config.json"),
            r#"{"auths": {"r.example:5000": {"auth": "YWRhOnMzY3JldA=="}}}"#,
        )
        .unwrap();
        let docker = resolve("r.example:5000", None, None, Some(dir.path())).unwrap();
        assert_eq!(docker, RegistryAuth::Basic("ada".into(), "s3cret".into()));
        assert_eq!(
            resolve("other.example", None, None, Some(dir.path())).unwrap(),
            RegistryAuth::Anonymous
        );
        let env = resolve(
            "r.example:5000",
            Some("bob".into()),
            Some("pw".into()),
            Some(dir.path()),
        )
        .unwrap();
        assert_eq!(env, RegistryAuth::Basic("bob".into(), "pw".into()));
        let half = resolve("r.example:5000", Some("bob".into()), None, None).unwrap_err();
        assert_eq!(half.kind(), ErrorKind::Credentials);
        std::fs::write(dir.path().join("config.json"), "{not json").unwrap();
        let broken = resolve("r.example:5000", None, None, Some(dir.path())).unwrap_err();
        assert_eq!(broken.kind(), ErrorKind::Credentials, "{broken}");
        // A Docker config past its cap, or a named pipe: refused, not read.
        std::fs::write(
            dir.path().join("config.json"),
            vec![b' '; MAX_DOCKER_CONFIG_BYTES as usize + 1],
        )
        .unwrap();
        let big = resolve("r.example:5000", None, None, Some(dir.path())).unwrap_err();
        assert_eq!(big.kind(), ErrorKind::Credentials, "{big}");
        std::fs::remove_file(dir.path().join("config.json")).unwrap();
        let status = std::process::Command::new("mkfifo")
            .arg(dir.path().join("config.json"))
            .status()
            .unwrap();
        assert!(status.success());
        let fifo = resolve("r.example:5000", None, None, Some(dir.path())).unwrap_err();
        assert_eq!(fifo.kind(), ErrorKind::Credentials, "{fifo}");
        assert!(fifo.with_causes().contains("named pipe"), "{fifo}");
    }
}
