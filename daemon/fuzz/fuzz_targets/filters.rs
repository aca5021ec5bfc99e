//! The listings' `key=value` filters: one pair a line, split at the first
//! `=`; every listing's parser accepts, or refuses naming a key as given.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spur_daemon::server::fuzzing::listing_filters;
use spur_proto::v1::KeyValue;

fuzz_target!(|text: &str| {
    let kvs: Vec<KeyValue> = text
        .lines()
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap_or((l, ""));
            KeyValue { key: k.to_string(), value: v.to_string() }
        })
        .collect();
    listing_filters(&kvs);
});
