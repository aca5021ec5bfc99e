//! Request limits: how large a message may be, how many items a repeated
//! field may hold, and how much of the txn log one answer carries. A request
//! over a limit is refused with InvalidArgument naming the field, never
//! worked through item by item. Every cap is listed with its value in the
//! README's "Request limits", and with its refusal in docs/src/request-limits.md.

use crate::error::{Error, Result};

/// The largest request any service decodes (tonic's default, made explicit).
pub const MAX_REQUEST_BYTES: usize = 4 << 20;
/// The largest answer of every service but the job listings: what a client
/// decodes by default, so a larger answer fails here, with a clear status,
/// instead of in the client.
pub const MAX_RESPONSE_BYTES: usize = 4 << 20;
/// Jobs and Cluster answers: a whole queue's listing, which clients decode
/// up to this size.
pub const MAX_LISTING_BYTES: usize = spur_proto::wire::JOBS_MESSAGE_MAX;
/// One page of the job history (ListJobs `history=yes`): at most this many
/// ended jobs from the store, and no more bytes of jobs than this (a first
/// page also holds memory's jobs, counted in its bytes); sacct asks for the next.
pub const HISTORY_PAGE_JOBS: usize = 1000;
pub const HISTORY_PAGE_BYTES: usize = 3 << 20;
/// Rows of one ListTxn answer stop at this many encoded bytes; the client
/// asks for the rest from `next_before_id`.
pub const TXN_PAGE_BYTES: usize = 3 << 20;

/// Job ids in one Cancel (`ids`, or an `id=` filter).
pub const MAX_IDS: usize = 10_000;
/// Array task references in one Cancel (`12_[1-5]` is one).
pub const MAX_TASK_REFS: usize = 1_000;
/// `key=value` pairs in one filter, where or set list.
pub const MAX_PAIRS: usize = 64;
/// Comma-separated values in one filter value (`user=a,b,c`).
pub const MAX_VALUES: usize = 10_000;
/// Environment variables of one job.
pub const MAX_ENV: usize = 10_000;

/// The longest job name (`--job-name`), in bytes. Slurm keeps names short
/// in every listing; this bounds what every `%x` in an output path expands to.
pub const MAX_JOB_NAME: usize = 1024;
/// The longest `--comment`, in bytes.
pub const MAX_COMMENT: usize = 4096;
/// The longest `-o/-e/-i/-D` path (Linux's PATH_MAX), as given and as expanded.
pub const MAX_PATH: usize = 4096;

/// Refuses a text field longer than `max` bytes, before anything is built from it.
pub fn cap_len(field: &str, text: &str, max: usize) -> Result<()> {
    if text.len() > max {
        return Err(Error::invalid(field, format!("{} bytes; at most {max}", text.len())));
    }
    Ok(())
}

/// Refuses a repeated field holding more than `max` items.
pub fn cap(field: &str, len: usize, max: usize) -> Result<()> {
    if len > max {
        return Err(Error::invalid(field, format!("{len} items in one request; at most {max}")));
    }
    Ok(())
}

/// Refuses a `key=value` list with too many pairs or a value listing too many items.
pub fn cap_pairs(field: &str, kvs: &[spur_proto::v1::KeyValue]) -> Result<()> {
    cap(field, kvs.len(), MAX_PAIRS)?;
    for kv in kvs {
        // Counted on the raw bytes, before anything is split or allocated.
        let values = kv.value.bytes().filter(|&b| b == b',').count() + 1;
        cap(&format!("{field} {}", kv.key.chars().take(32).collect::<String>()), values, MAX_VALUES)?;
    }
    Ok(())
}

/// A multi-target request's Name: the first ids, then how many more
/// (`1,2,3,…(+29997 more)`), so a row names what was asked without carrying it all.
pub fn ids_summary(ids: &[u64]) -> String {
    const SHOWN: usize = 3;
    let mut s = ids.iter().take(SHOWN).map(u64::to_string).collect::<Vec<_>>().join(",");
    if ids.len() > SHOWN {
        s.push_str(&format!(",…(+{} more)", ids.len() - SHOWN));
    }
    s
}

/// The first ids of a list for Info, with the total when it is longer.
pub fn ids_json(ids: &[u64]) -> serde_json::Value {
    const SHOWN: usize = 100;
    match ids.len() {
        n if n > SHOWN => serde_json::json!({ "first": &ids[..SHOWN], "total": n }),
        _ => serde_json::json!(ids),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_name_the_field_and_the_figure() {
        assert!(cap("ids", MAX_IDS, MAX_IDS).is_ok());
        let e = cap("ids", 30_000, MAX_IDS).unwrap_err().to_string();
        assert_eq!(e, "ids: 30000 items in one request; at most 10000");
        let kv = |v: &str| spur_proto::v1::KeyValue { key: "user".into(), value: v.into() };
        assert!(cap_pairs("filter", &[kv("a,b")]).is_ok());
        let many = vec!["x"; MAX_VALUES + 1].join(",");
        assert!(cap_pairs("filter", &[kv(&many)]).unwrap_err().to_string().starts_with("filter user: "));
    }

    #[test]
    fn ids_are_summarised() {
        assert_eq!(ids_summary(&[7]), "7");
        assert_eq!(ids_summary(&[1, 2, 3]), "1,2,3");
        assert_eq!(ids_summary(&(1..=30_000).collect::<Vec<_>>()), "1,2,3,…(+29997 more)");
        assert_eq!(ids_json(&[1, 2]), serde_json::json!([1, 2]));
        assert_eq!(ids_json(&(1..=101).collect::<Vec<_>>())["total"], 101);
    }
}
