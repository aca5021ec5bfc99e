//! The host's facts for provisioner conditions, collected once at startup
//! and sent with every registration. The parsers are pure over the text of
//! the files so they can be tested on other machines' files; [`collect`]
//! only reads. A fact the host lacks is left out rather than sent empty, so
//! a condition can tell "unknown" from "blank".

use spur_proto::v1 as pb;
use spur_sched::model::{CORES_PER_SOCKET, SOCKETS, THREADS_PER_CORE, TMP_DISK_MB};
use std::collections::BTreeMap;
use std::path::Path;

/// uname's fields, in `uname()`'s order, as facts.
const UNAME: [&str; 6] = [
    "uname.sysname",
    "uname.nodename",
    "uname.release",
    "uname.version",
    "uname.machine",
    "uname.domainname",
];

/// Every fact spurd collects, and so every key a facts file may set: the
/// names in the three tables, so a new fact is one line of one of them.
pub fn keys() -> impl Iterator<Item = &'static str> {
    (UNAME.into_iter().chain(OS_RELEASE.iter().chain(&CPUINFO).map(|(_, fact)| *fact))).chain(LAYOUT)
}

/// The node's layout and scratch disk, which `--tmp`, `--sockets-per-node`,
/// `--cores-per-socket` and `--threads-per-core` are checked against.
const LAYOUT: [&str; 4] = [TMP_DISK_MB, SOCKETS, CORES_PER_SOCKET, THREADS_PER_CORE];

/// os-release's variables that are facts, and their names as facts.
const OS_RELEASE: [(&str, &str); 6] = [
    ("NAME", "osrelease.name"),
    ("ID", "osrelease.id"),
    ("ID_LIKE", "osrelease.id_like"),
    ("VERSION", "osrelease.version"),
    ("VERSION_ID", "osrelease.version_id"),
    ("VERSION_CODENAME", "osrelease.version_codename"),
];

/// /proc/cpuinfo's fields that are facts (the numeric ones are `NUMERIC_FACTS`).
const CPUINFO: [(&str, &str); 6] = [
    ("vendor_id", "cpuinfo.vendor_id"),
    ("cpu family", "cpuinfo.cpu_family"),
    ("model", "cpuinfo.model"),
    ("model name", "cpuinfo.model_name"),
    ("microcode", "cpuinfo.microcode"),
    ("cpu cores", "cpuinfo.cpu_cores"),
];

/// The facts of this host. Unreadable files give no facts, not an error:
/// a container without /sys still runs jobs.
pub fn collect() -> pb::HostFacts {
    let mut values = uname();
    let os = std::fs::read_to_string("/etc/os-release")
        .or_else(|_| std::fs::read_to_string("/usr/lib/os-release"))
        .unwrap_or_default();
    values.extend(parse_os_release(&os));
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    values.extend(parse_cpuinfo(&cpuinfo));
    values.extend(parse_layout(&cpuinfo));
    // Slurm's TmpFS default: the size of /tmp's file system.
    if let Ok(st) = nix::sys::statvfs::statvfs("/tmp") {
        let bytes = st.blocks().saturating_mul(st.fragment_size());
        values.insert(TMP_DISK_MB.into(), (bytes >> 20).to_string());
    }
    pb::HostFacts {
        values: values.into_iter().collect(),
        modaliases: modaliases(Path::new("/sys/bus/pci/devices")),
    }
}

fn uname() -> BTreeMap<String, String> {
    let Ok(u) = nix::sys::utsname::uname() else { return BTreeMap::new() };
    let text = |s: &std::ffi::OsStr| s.to_string_lossy().into_owned();
    // The kernel's word for "no NIS domain", which no condition means to match.
    let domain = Some(text(u.domainname())).filter(|d| d != "(none)").unwrap_or_default();
    let values = [
        text(u.sysname()),
        text(u.nodename()),
        text(u.release()),
        text(u.version()),
        text(u.machine()),
        domain,
    ];
    UNAME.into_iter().map(str::to_string).zip(values).collect()
}

/// The PCI devices' modaliases, sorted, each once: eight identical GPUs
/// match a glob no differently from one.
fn modaliases(devices: &Path) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(devices) else { return vec![] };
    let mut out: Vec<String> = dir
        .flatten()
        .filter_map(|d| std::fs::read_to_string(d.path().join("modalias")).ok())
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The os-release variables that are facts; values unquoted as the shell
/// would, since the file is defined to be sourceable.
pub fn parse_os_release(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') {
            continue;
        }
        let Some((var, raw)) = line.split_once('=') else { continue };
        if let Some((_, key)) = OS_RELEASE.iter().find(|(v, _)| *v == var.trim()) {
            out.insert(key.to_string(), unquote(raw.trim()));
        }
    }
    out
}

/// Shell quoting as os-release uses it: single quotes literal, double
/// quotes with backslash escapes, and the two concatenated with bare text.
fn unquote(raw: &str) -> String {
    let (mut out, mut quote, mut chars) = (String::new(), None, raw.chars());
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (Some('\''), _) => out.push(c),
            (Some(_), '\\') => match chars.next() {
                Some(e @ ('$' | '"' | '\\' | '`')) => out.push(e),
                Some(e) => out.extend(['\\', e]),
                None => out.push('\\'),
            },
            (None, '\\') => out.extend(chars.next()),
            _ => out.push(c),
        }
    }
    out
}

/// The facts of the first processor block: every core of a host reports the
/// same model. Numbers are stored in decimal (microcode is hex in the file);
/// one that does not parse is left out, since a condition compares it as an
/// integer (ppc64's `model` is "2.2 (pvr ...)").
pub fn parse_cpuinfo(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let block = text.lines().skip_while(|l| l.trim().is_empty()).take_while(|l| !l.trim().is_empty());
    for line in block {
        let Some((field, value)) = line.split_once(':') else { continue };
        let Some((_, key)) = CPUINFO.iter().find(|(f, _)| *f == field.trim()) else { continue };
        let value = value.trim();
        let value = match spur_sched::model::NUMERIC_FACTS.contains(key) {
            true => number(value).map(|n| n.to_string()),
            false => Some(value.to_string()),
        };
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            out.insert(key.to_string(), v);
        }
    }
    out
}

/// Sockets (distinct `physical id`s), cores per socket (`cpu cores`) and
/// threads per core (`siblings` / `cpu cores`); left out where the file
/// does not say (aarch64, containers that hide them).
pub fn parse_layout(text: &str) -> BTreeMap<String, String> {
    let mut ids: Vec<&str> = vec![];
    let (mut cores, mut siblings) = (None, None);
    for line in text.lines() {
        let Some((field, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        match field.trim() {
            "physical id" if !ids.contains(&value) => ids.push(value),
            "cpu cores" if cores.is_none() => cores = value.parse::<u64>().ok().filter(|n| *n > 0),
            "siblings" if siblings.is_none() => siblings = value.parse::<u64>().ok().filter(|n| *n > 0),
            _ => {}
        }
    }
    let mut out = BTreeMap::new();
    if !ids.is_empty() {
        out.insert(SOCKETS.to_string(), ids.len().to_string());
    }
    if let Some(c) = cores {
        out.insert(CORES_PER_SOCKET.to_string(), c.to_string());
        if let Some(s) = siblings {
            out.insert(THREADS_PER_CORE.to_string(), (s / c).max(1).to_string());
        }
    }
    out
}

fn number(text: &str) -> Option<u64> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get<'a>(m: &'a BTreeMap<String, String>, k: &str) -> Option<&'a str> {
        m.get(k).map(String::as_str)
    }

    #[test]
    fn os_release_values_are_unquoted_as_the_shell_would() {
        let text = r#"PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
VERSION='12 (bookworm)'
VERSION_CODENAME=bookworm
ID=debian
# ID=ubuntu
HOME_URL="https://www.debian.org/"
ID_LIKE="rhel \"fedora\"\\x"
"#;
        let f = parse_os_release(text);
        assert_eq!(get(&f, "osrelease.name"), Some("Debian GNU/Linux"));
        assert_eq!(get(&f, "osrelease.version_id"), Some("12"));
        assert_eq!(get(&f, "osrelease.version"), Some("12 (bookworm)"));
        assert_eq!(get(&f, "osrelease.version_codename"), Some("bookworm"));
        assert_eq!(get(&f, "osrelease.id"), Some("debian"), "a comment is not an assignment");
        assert_eq!(get(&f, "osrelease.id_like"), Some(r#"rhel "fedora"\x"#));
        assert_eq!(f.len(), 6, "PRETTY_NAME and HOME_URL are not facts: {f:?}");
    }

    #[test]
    fn os_release_missing_keys_are_absent() {
        let f = parse_os_release("NAME=\"Alpine Linux\"\nID=alpine\nVERSION_ID=3.19.1\n\ngarbage line\n");
        assert_eq!(get(&f, "osrelease.name"), Some("Alpine Linux"));
        assert_eq!(get(&f, "osrelease.version_id"), Some("3.19.1"));
        assert!(!f.contains_key("osrelease.id_like") && !f.contains_key("osrelease.version_codename"));
        assert!(parse_os_release("").is_empty());
        assert_eq!(unquote(r#"'a b'"c"d"#), "a bcd");
        assert_eq!(unquote(r#""\$HOME \n""#), r"$HOME \n", "only \\ $ \" ` are escapes in double quotes");
    }

    #[test]
    fn x86_cpuinfo_takes_the_first_processor_in_decimal() {
        let text = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n\
            model name\t: AMD EPYC 7763 64-Core Processor\nstepping\t: 1\nmicrocode\t: 0xa0011d1\n\
            cpu MHz\t\t: 2450.000\ncpu cores\t: 64\nflags\t\t: fpu vme\npower management:\n\n\
            processor\t: 1\nvendor_id\t: GenuineIntel\ncpu cores\t: 2\n";
        let f = parse_cpuinfo(text);
        assert_eq!(get(&f, "cpuinfo.vendor_id"), Some("AuthenticAMD"));
        assert_eq!(get(&f, "cpuinfo.cpu_family"), Some("25"));
        assert_eq!(get(&f, "cpuinfo.model"), Some("1"), "'model name' is not 'model'");
        assert_eq!(get(&f, "cpuinfo.model_name"), Some("AMD EPYC 7763 64-Core Processor"));
        assert_eq!(get(&f, "cpuinfo.microcode"), Some("167776721"));
        assert_eq!(get(&f, "cpuinfo.cpu_cores"), Some("64"), "the first block only");
        assert_eq!(get(&parse_cpuinfo("microcode : 0xf0\n"), "cpuinfo.microcode"), Some("240"));
    }

    #[test]
    fn the_layout_counts_sockets_cores_and_threads() {
        let cpu = |id: u32, phys: u32| {
            format!("processor\t: {id}\nphysical id\t: {phys}\nsiblings\t: 4\ncpu cores\t: 2\n\n")
        };
        let text: String = (0..8).map(|i| cpu(i, i / 4)).collect();
        let f = parse_layout(&text);
        assert_eq!(get(&f, SOCKETS), Some("2"));
        assert_eq!(get(&f, CORES_PER_SOCKET), Some("2"));
        assert_eq!(get(&f, THREADS_PER_CORE), Some("2"));
        assert!(parse_layout("processor\t: 0\nBogoMIPS\t: 50.00\n").is_empty(), "aarch64 says none");
    }

    #[test]
    fn aarch64_cpuinfo_has_no_vendor_and_odd_numbers_are_left_out() {
        let text = "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes pmull\n\
            CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\n\n\
            processor\t: 1\nBogoMIPS\t: 50.00\n";
        assert!(parse_cpuinfo(text).is_empty(), "{:?}", parse_cpuinfo(text));
        let ppc = "processor\t: 0\ncpu\t\t: POWER9 (architected)\nmodel\t\t: 2.2 (pvr 004e 1202)\n";
        assert!(parse_cpuinfo(ppc).is_empty());
        assert!(parse_cpuinfo("").is_empty());
    }

    #[test]
    fn modaliases_are_sorted_once_each_and_a_missing_dir_is_none() {
        let dir = tempfile::tempdir().unwrap();
        for (dev, alias) in
            [("0000:02:00.0", "pci:vB\n"), ("0000:01:00.0", "pci:vA"), ("0000:03:00.0", "pci:vB")]
        {
            std::fs::create_dir(dir.path().join(dev)).unwrap();
            std::fs::write(dir.path().join(dev).join("modalias"), alias).unwrap();
        }
        std::fs::create_dir(dir.path().join("0000:04:00.0")).unwrap();
        assert_eq!(modaliases(dir.path()), ["pci:vA", "pci:vB"]);
        assert!(modaliases(&dir.path().join("absent")).is_empty());
    }

    #[test]
    fn this_host_has_the_kernel_facts_and_only_known_keys() {
        let f = collect();
        assert_eq!(f.values.get("uname.sysname").map(String::as_str), Some("Linux"));
        assert!(f.values.keys().all(|k| keys().any(|n| n == k)), "{:?}", f.values.keys());
    }
}
