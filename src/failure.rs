//! How a command fails: a message for the user and the process exit code. Shared by the
//! command line and the workbench, which sits below it.

/// A failed command: what to print on stderr and the exit code.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub code: u8,
}

impl Failure {
    /// A template or parse error (exit 1).
    pub fn invalid(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            code: 1,
        }
    }

    /// A usage or I/O error (exit 2).
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            code: 2,
        }
    }
}
