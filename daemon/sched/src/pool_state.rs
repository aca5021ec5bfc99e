//! What a pass keeps of provisioner pools (plain data, a leaf): the classes
//! of jobs with the same candidate definitions, and verdicts judged in the pass.

use super::job::JobId;
use super::memo::RoomFailures;
use super::nodes::PartNodes;
use super::provision::Admit;
use std::collections::HashMap;
use std::sync::Arc;

/// One partition's nodes as a set of jobs with the same definitions sees them.
pub(crate) struct Class {
    pub nodes: PartNodes,
    pub failures: RoomFailures,
    /// Some node is `exclusive: workflow`: shapes carry the job's workflow.
    pub workflow: bool,
}

/// The pass's classes, and verdicts made in the pass for jobs the snapshot had none for.
#[derive(Default)]
pub(crate) struct Pools {
    pub classes: Vec<Class>,
    pub by_admit: HashMap<(usize, usize), u32>,
    pub by_key: HashMap<(usize, Vec<u16>, bool), u32>,
    pub inline: HashMap<JobId, Arc<Admit>>,
    pub sizes: Option<Vec<u32>>,
}
