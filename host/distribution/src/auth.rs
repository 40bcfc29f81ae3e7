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

use docker_credential::{CredentialRetrievalError, DockerCredential};
use oci_client::secrets::RegistryAuth;

use crate::error::{DistributionError, ErrorKind, Result};

/// The environment variable holding the registry user name.
pub const USERNAME_ENV: &str = "TOOLHOST_REGISTRY_USERNAME";
/// The environment variable holding the registry password (or token).
pub const PASSWORD_ENV: &str = "TOOLHOST_REGISTRY_PASSWORD";

/// The credentials for `registry` (`HOST[:PORT]`).
///
/// # Errors
///
/// [`ErrorKind::Credentials`] when only one of the two variables is set,
/// when the Docker config file exists but cannot be parsed, when its
/// credential helper fails, or when it holds only an identity token (an
/// OAuth refresh token, which this client cannot use).
pub fn credentials(registry: &str) -> Result<RegistryAuth> {
    let user = std::env::var(USERNAME_ENV).ok().filter(|v| !v.is_empty());
    let password = std::env::var(PASSWORD_ENV).ok().filter(|v| !v.is_empty());
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
    match docker_credential::get_credential(registry) {
        Ok(DockerCredential::UsernamePassword(user, password)) => Ok(RegistryAuth::Basic(user, password)),
        Ok(DockerCredential::IdentityToken(_)) => Err(DistributionError::new(
            ErrorKind::Credentials,
            format!(
                "the Docker config holds only an identity token for {registry}, which toolhost cannot use; log in with a user name and password, or set {USERNAME_ENV} and {PASSWORD_ENV}"
            ),
        )),
        Err(
            CredentialRetrievalError::NoCredentialConfigured
            | CredentialRetrievalError::ConfigNotFound
            | CredentialRetrievalError::ConfigReadError,
        ) => Ok(RegistryAuth::Anonymous),
        Err(e) => Err(DistributionError::new(
            ErrorKind::Credentials,
            format!("reading the Docker credentials for {registry}: {e}"),
        )),
    }
}
