//! Constants of the wire that both ends must agree on: where the controller
//! listens, the identity headers, flow-control windows and the largest answer.

/// HTTP/2 flow-control window for clients and the controller alike.
pub const WINDOW: u32 = 8 << 20;

/// The largest answer a jobs listing may be (a million jobs, roughly):
/// tonic refuses answers over 4 MiB by default, and 100,000 jobs are tens of MiB.
pub const JOBS_MESSAGE_MAX: usize = 1 << 30;

/// Where clients look for the controller when told nothing: the loopback's
/// address rather than `localhost`, whose lookup cost each one-shot command a
/// resolver thread (a millisecond); the controller's default `[::]:6817`
/// takes IPv4 too.
pub const DEFAULT_CONTROLLER: &str = "http://127.0.0.1:6817";
/// The environment variable naming the controller's address.
pub const CONTROLLER_ENV: &str = "SPUR_CONTROLLER_ADDR";

/// Metadata keys carrying the caller's asserted local identity (auth plugin `none`).
pub const USER_HEADER: &str = "x-spur-user";
/// The caller's uid, beside [`USER_HEADER`].
pub const UID_HEADER: &str = "x-spur-uid";
/// A MUNGE credential, new for each request (auth plugin `munge`).
pub const MUNGE_HEADER: &str = "x-spur-munge";
/// Why the client sent no credential (munged down, say), for the refusal to name.
pub const MUNGE_ERROR_HEADER: &str = "x-spur-munge-error";
/// A request a follower forwards to the leader carries the caller it
/// authenticated, sealed in a MUNGE credential of the controllers' own uid
/// (auth plugin `munge`; `daemon/src/auth/handoff.rs`).
pub const FORWARD_MUNGE_HEADER: &str = "x-spur-forward-munge";
/// Marks a request a follower forwarded (plugins other than `munge`, whose
/// credentials the leader verifies again): Info says `"forwarded": true`.
pub const FORWARDED_HEADER: &str = "x-spur-forwarded";
/// The health service name only the leader serves (`SERVING` there,
/// `NOT_SERVING` on a follower), so a load balancer can find the leader.
pub const LEADER_SERVICE: &str = "spur.v1.Leader";

/// The health name a follower serves as `SERVING` for the address it
/// advertises (`BACKUP_AS` + `host:port`): what `scontrol takeover` checks,
/// so the lease is handed to an address that controller answers to.
pub const BACKUP_AS: &str = "spur.v1.Backup/";
/// The munged socket clients and agents encode with (default: munged's own).
pub const MUNGE_SOCKET_ENV: &str = "SPUR_MUNGE_SOCKET";
/// `none` stops a client from attaching MUNGE credentials (the default,
/// `auto`, attaches one whenever munged's socket is there).
pub const AUTH_ENV: &str = "SPUR_AUTH";

/// `--controller URL[,URL...]`, else `SPUR_CONTROLLER_ADDR`, else
/// `http://127.0.0.1:6817`: the list, each address with its scheme.
pub fn resolve_controller(flag: Option<&str>) -> String {
    let raw = flag
        .map(str::to_string)
        .or_else(|| std::env::var(CONTROLLER_ENV).ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| DEFAULT_CONTROLLER.to_string());
    controllers(&raw).join(",")
}

/// The controllers a comma-separated address list names, in the order a
/// client tries them (high availability: any of them answers, a follower
/// forwarding to the leader), each with a scheme (`http://` when none).
pub fn controllers(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(|a| if a.contains("://") { a.to_string() } else { format!("http://{a}") })
        .collect()
}

/// The local login name: `$USER`, `$LOGNAME`, else /etc/passwd's name of the real uid.
pub fn local_user() -> String {
    user_of(None)
}

/// [`local_user`] for a caller that has read the uid already ([`local_uid`]).
pub fn user_of(uid: Option<u32>) -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .ok()
        .filter(|u| !u.is_empty())
        .or_else(|| uid.or_else(local_uid).and_then(passwd_name))
        .unwrap_or_else(|| "unknown".into())
}

/// The login name of `uid` from /etc/passwd, for sessions without $USER (cron, tmux as root).
fn passwd_name(uid: u32) -> Option<String> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let mut f = l.split(':');
        let name = f.next()?;
        (f.nth(1)?.parse::<u32>().ok()? == uid).then(|| name.to_string())
    })
}

/// The process's uid as the owner of /proc/self, which needs no libc
/// binding and one stat (reading /proc/self/status cost a one-shot command
/// eight reads of a generated file). Our binaries are never setuid, so the
/// effective uid it shows is the real one.
pub fn local_uid() -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").ok().map(|m| m.uid())
}
