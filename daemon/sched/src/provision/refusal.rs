//! Why a definition refused a job: plain data (a leaf), which the pending
//! reason's facts carry and the console and CLI print.

use std::fmt;

/// Why one definition refused a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// The policy was false for the job's request.
    Policy { expr: String },
    /// The policy could not be evaluated: it refuses (a user job gets no fallback).
    PolicyError { expr: String, error: String },
    /// A job annotation the definition does not match.
    Annotation { key: String, wanted: String, had: Option<String>, matcher: &'static str },
    /// aws, slurm, pbs, coreweave: listed, offered to no job in this build.
    NoDriver { backend: &'static str },
    /// A static pool with no usable node in the job's partition.
    NoUsableNodes,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub definition: String,
    pub why: Why,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let one = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        write!(f, "{}: ", self.definition)?;
        match &self.why {
            Why::Policy { expr } => write!(f, "policy is false ({})", one(expr)),
            Why::PolicyError { expr, error } => write!(f, "policy failed ({}): {error}", one(expr)),
            Why::Annotation { key, wanted, had: Some(h), matcher } => {
                write!(f, "annotation {key}={wanted} not matched by {key}={h} ({matcher})")
            }
            Why::Annotation { key, wanted, had: None, matcher } => {
                write!(f, "annotation {key}={wanted} not matched: the definition has no {key} ({matcher})")
            }
            Why::NoDriver { backend } => write!(f, "{backend} definitions have no driver in this build"),
            Why::NoUsableNodes => write!(f, "its pool has no usable node in the partition"),
        }
    }
}
