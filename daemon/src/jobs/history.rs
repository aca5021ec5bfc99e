//! The job history behind sacct (ListJobs `history=yes`): the ended jobs the
//! store keeps after their purge from memory, read a page at a time and
//! decoded without their scripts and environments, which no listing shows.
//! A history of 100,000 jobs with 1 MB scripts is then never in memory at once.

use super::record::JobRecord;
use super::{JobService, KIND_JOB};
use crate::error::{Error, Result};
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::fmt;

/// Store rows one query reads while a history page fills.
pub const HISTORY_READ: i64 = 500;

/// The stored fields a listing skips unread: the largest by far.
const UNLISTED: [&str; 2] = ["script", "env"];

/// A stored job decoded without [`UNLISTED`]: their text is skipped by the
/// parser, never allocated.
struct Listed(JobRecord);

impl<'de> Deserialize<'de> for Listed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Fields;
        impl<'de> Visitor<'de> for Fields {
            type Value = Map<String, Value>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a stored job (a JSON object)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> std::result::Result<Self::Value, A::Error> {
                let mut out = Map::new();
                while let Some(key) = m.next_key::<String>()? {
                    if UNLISTED.contains(&key.as_str()) {
                        m.next_value::<IgnoredAny>()?;
                    } else {
                        let v = m.next_value::<Value>()?;
                        out.insert(key, v);
                    }
                }
                Ok(out)
            }
        }
        let fields = d.deserialize_map(Fields)?;
        JobRecord::deserialize(Value::Object(fields)).map(Listed).map_err(de::Error::custom)
    }
}

impl JobRecord {
    /// A job as the store keeps it, without its script and environment (left empty).
    pub fn for_listing(name: &str, doc: &str) -> Result<JobRecord> {
        let Listed(mut j) = serde_json::from_str(doc)
            .map_err(|e| Error::Store(format!("stored job {name} does not decode: {e}")))?;
        j.orphan_steps();
        Ok(j)
    }
}

/// The job id a store key names ("" before the first).
fn key_id(key: &str) -> Result<u64> {
    if key.is_empty() {
        return Ok(0);
    }
    key.parse().map_err(|_| Error::Store(format!("stored job key '{key}' is not a job id")))
}

impl JobService {
    /// One page of the ended jobs the store keeps and memory no longer holds,
    /// in the store's key order, after job `after` (0: from the start), each
    /// that `keep` accepts handed to `take`; `take` returns false, not taking
    /// it, once the page is full. Returns the job to resume after, or None
    /// when the store has no more. Without a store a purged job is gone, as
    /// Slurm's without accounting storage.
    pub async fn ended_page(
        &self,
        after: u64,
        keep: impl Fn(&JobRecord) -> bool,
        mut take: impl FnMut(&JobRecord) -> bool,
    ) -> Result<Option<u64>> {
        let Some(store) = &self.retention.store else { return Ok(None) };
        let mut key = if after == 0 { String::new() } else { after.to_string() };
        loop {
            let rows = store.load_page(KIND_JOB, &key, HISTORY_READ).await?;
            // One lock per read, by the keys: the jobs memory lists itself are
            // not listed twice, nor decoded at all.
            let held: HashSet<u64> = {
                let q = self.lock();
                rows.iter()
                    .filter_map(|(name, _)| key_id(name).ok())
                    .filter(|id| q.jobs().contains_key(id))
                    .collect()
            };
            for (name, doc) in &rows {
                if !key_id(name).is_ok_and(|id| held.contains(&id)) {
                    let j = JobRecord::for_listing(name, doc)?;
                    if !j.is_active() && keep(&j) && !take(&j) {
                        return key_id(&key).map(Some);
                    }
                }
                key.clone_from(name);
            }
            if (rows.len() as i64) < HISTORY_READ {
                return Ok(None);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_decodes_all_but_script_and_env() {
        let mut j = JobRecord { id: 7, name: "big".into(), user: "alice".into(), ..JobRecord::default() };
        j.script = "#!/bin/sh\n".repeat(1000);
        j.env = super::super::env::Env::from_pairs([("PATH", "/bin")]).unwrap();
        j.comment = "kept".into();
        let doc = serde_json::to_string(&j).unwrap();
        let listed = JobRecord::for_listing("7", &doc).unwrap();
        assert!(listed.script.is_empty() && listed.env.is_empty());
        let whole = JobRecord::from_stored("7", &doc).unwrap();
        assert_eq!(listed, JobRecord { script: String::new(), env: Default::default(), ..whole });
        assert!(JobRecord::for_listing("7", "[1]").unwrap_err().to_string().contains("stored job 7"));
    }

    #[test]
    fn a_key_names_its_job() {
        assert_eq!(key_id("").unwrap(), 0);
        assert_eq!(key_id("42").unwrap(), 42);
        assert!(key_id("x").unwrap_err().to_string().contains("'x'"));
    }
}
