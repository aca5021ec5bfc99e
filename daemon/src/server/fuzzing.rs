//! Entry points for `daemon/fuzz` (feature `fuzzing`, never in a shipped
//! build): every listing's `key=value` filter parser, after the pair cap the
//! gate applies first, as a request reaches them. A refusal names one of the
//! keys as the caller spelled it and is no longer than that pair and a
//! sentence (what `filter_props` asserts, here on libFuzzer's inputs).

use super::limits::cap_pairs;
use super::{accounting, audit_api, jobs_api, nodes_api};
use spur_proto::v1 as pb;

/// Feeds `kvs` to each listing's filter parser; panics on a broken promise.
pub fn listing_filters(kvs: &[pb::KeyValue]) {
    if cap_pairs("filter", kvs).is_err() {
        return;
    }
    let req = pb::ListRequest { filter: kvs.to_vec(), ..Default::default() };
    let refusals = [jobs_api::fuzz_filter(kvs).err(), nodes_api::fuzz_filter(kvs).err()]
        .into_iter()
        .chain(accounting::fuzz_filters(&req).into_iter().map(Result::err))
        .chain([audit_api::filter_of(kvs).err()]);
    for e in refusals.flatten() {
        check_refusal(&e.to_string(), kvs);
    }
}

fn check_refusal(e: &str, kvs: &[pb::KeyValue]) {
    assert!(kvs.iter().any(|kv| e.starts_with(&format!("{}: ", kv.key))), "names no key as given: {e:.200}");
    let most = kvs.iter().map(|kv| kv.key.len() + kv.value.len()).max().unwrap_or(0);
    assert!(e.len() <= most + 256, "{} bytes: {e:?}", e.len());
}
