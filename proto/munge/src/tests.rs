use super::*;
use crate::daemon::TestMunged;

/// A private munged, or None (and a note) where MUNGE is not installed;
/// CI sets SPUR_TEST_MUNGE=1, which turns its absence into a failure.
fn munged(dir: &Path) -> Option<TestMunged> {
    if !TestMunged::available() {
        assert!(
            std::env::var("SPUR_TEST_MUNGE").is_err(),
            "SPUR_TEST_MUNGE is set but munged is not installed"
        );
        eprintln!("munged is not installed: skipped");
        return None;
    }
    Some(TestMunged::start(dir).unwrap())
}

#[test]
fn a_credential_decodes_once_to_its_encoder() {
    let dir = tempfile::tempdir().unwrap();
    let Some(d) = munged(dir.path()) else { return };
    let m = Munge::load(Some(&d.socket())).unwrap();
    let cred = m.encode().unwrap();
    assert!(cred.starts_with("MUNGE:"), "{cred}");
    let who = m.decode(&cred).unwrap();
    let me = std::fs::metadata("/proc/self").map(|md| std::os::unix::fs::MetadataExt::uid(&md)).unwrap();
    assert_eq!(who.uid, me);
    let again = m.decode(&cred).unwrap_err();
    assert_eq!(again.kind, Kind::Replayed, "{again}");
}

#[test]
fn another_key_garbage_and_a_missing_daemon_are_refused_by_kind() {
    let dir = tempfile::tempdir().unwrap();
    let Some(a) = munged(&dir.path().join("a")) else { return };
    let b = TestMunged::start(&dir.path().join("b")).unwrap();
    let ma = Munge::load(Some(&a.socket())).unwrap();
    let mb = Munge::load(Some(&b.socket())).unwrap();
    let cred = ma.encode().unwrap();
    assert_eq!(mb.decode(&cred).unwrap_err().kind, Kind::Invalid, "another cluster's key");
    assert_eq!(ma.decode("MUNGE:AAAA:").unwrap_err().kind, Kind::Invalid);
    assert_eq!(ma.decode("MUNGE:\0").unwrap_err().kind, Kind::Invalid);
    assert_eq!(ma.decode(&"M".repeat(MAX_CREDENTIAL + 1)).unwrap_err().kind, Kind::Invalid);
    let gone = Munge::load(Some(&dir.path().join("nowhere.socket"))).unwrap();
    let e = gone.encode().unwrap_err();
    assert_eq!(e.kind, Kind::Socket, "{e}");
}

#[test]
fn a_payload_is_sealed_with_its_credential_and_capped() {
    let dir = tempfile::tempdir().unwrap();
    let Some(d) = munged(dir.path()) else { return };
    let m = Munge::load(Some(&d.socket())).unwrap();
    let cred = m.encode_with(br#"{"user":"alice","uid":1002}"#).unwrap();
    let (_, payload) = m.decode_with(&cred).unwrap();
    assert_eq!(payload, br#"{"user":"alice","uid":1002}"#);
    let (_, none) = m.decode_with(&m.encode().unwrap()).unwrap();
    assert!(none.is_empty());
    let long = m.encode_with(&[b'x'; MAX_PAYLOAD + 1]).unwrap_err();
    assert!(long.message.contains("longer than 1024"), "{long}");
}
