//! The daemon's one error type, and its single mapping to gRPC status codes.

use spur_vocab::keys::KeyError;

#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// Bad input; the message names the argument or key.
    #[error("{0}")]
    InvalidArgument(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    FailedPrecondition(String),
    #[error("{0}")]
    PermissionDenied(String),
    /// The caller's credential is wrong (an agent key).
    #[error("{0}")]
    Unauthenticated(String),
    /// A transient state: the caller should retry.
    #[error("{0}")]
    Unavailable(String),
    /// A per-caller cap is reached (streams held): retry once one is given back.
    #[error("{0}")]
    ResourceExhausted(String),
    #[error("store: {0}")]
    Store(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn invalid(key: &str, message: impl std::fmt::Display) -> Self {
        Error::InvalidArgument(format!("{key}: {message}"))
    }

    /// The txn outcome this error is recorded as.
    pub fn outcome(&self) -> &'static str {
        match self {
            Error::PermissionDenied(_) | Error::Unauthenticated(_) => "denied",
            _ => "error",
        }
    }
}

impl From<KeyError> for Error {
    fn from(e: KeyError) -> Self {
        Error::InvalidArgument(e.to_string())
    }
}

impl From<sqlx::Error> for Error {
    /// A database that cannot be reached is a transient state (retry);
    /// anything else the database said is a store error.
    fn from(e: sqlx::Error) -> Self {
        use sqlx::Error as E;
        match e {
            E::Io(_) | E::Tls(_) | E::PoolTimedOut | E::PoolClosed | E::WorkerCrashed => {
                Error::Unavailable(e.to_string())
            }
            E::Database(ref d) if d.code().is_some_and(|c| c.starts_with("08") || c.starts_with("57P")) => {
                // SQLSTATE class 08 (connection exception), 57P (admin shutdown, cannot connect now).
                Error::Unavailable(e.to_string())
            }
            _ => Error::Store(e.to_string()),
        }
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::Store(format!("stored record does not decode: {e}"))
    }
}

/// The longest status message sent: it travels in a header, and errors may
/// quote what the caller sent.
const STATUS_MESSAGE_MAX: usize = 1024;

impl From<Error> for tonic::Status {
    fn from(e: Error) -> Self {
        let mut msg = e.to_string();
        crate::store::clip(&mut msg, STATUS_MESSAGE_MAX);
        match e {
            Error::InvalidArgument(_) => tonic::Status::invalid_argument(msg),
            Error::NotFound(_) => tonic::Status::not_found(msg),
            Error::FailedPrecondition(_) => tonic::Status::failed_precondition(msg),
            Error::PermissionDenied(_) => tonic::Status::permission_denied(msg),
            Error::Unauthenticated(_) => tonic::Status::unauthenticated(msg),
            Error::Unavailable(_) | Error::Store(_) => tonic::Status::unavailable(msg),
            Error::ResourceExhausted(_) => tonic::Status::resource_exhausted(msg),
        }
    }
}
