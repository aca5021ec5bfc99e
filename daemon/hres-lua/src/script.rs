//! One hres/lua script in one Lua state. Loading runs the file and checks
//! every required function; [`Script::refresh`] reloads it when the file
//! changed (dropping its globals, as the page says, without calling create
//! context again) and keeps the last good one when the new one cannot load.
//! Every call may carry a deadline, enforced by an instruction-count hook:
//! it stops Lua code, not a command the script waits for.

use super::{Rc, func};
use mlua::{HookTriggers, IntoLuaMulti, Lua, MultiValue, Value, VmState};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// What a callback returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub rc: Rc,
    /// The second return value when it is a string: a pre-run's payload.
    pub payload: Option<String>,
    /// The call's last `slurm.user_msg` or `slurm.log_error`, or why it
    /// failed (a Lua error, a timeout): what a held job shows as its reason.
    pub message: Option<String>,
}

impl Outcome {
    pub fn failed(message: String) -> Outcome {
        Outcome { rc: Rc::Error(super::ERROR), payload: None, message: Some(message) }
    }

    /// The message, or one naming the function and its code.
    pub fn describe(&self, resource: &str, f: &str) -> String {
        match &self.message {
            Some(m) => format!("{resource}: {m}"),
            None => format!("{resource}: {f} returned {}", self.rc.name()),
        }
    }

    /// What a failed call of `f` for `resource` comes to; None when it succeeded.
    pub fn failure(&self, resource: &str, f: &str) -> Option<Failure> {
        (!self.rc.ok()).then(|| Failure {
            resource: resource.to_string(),
            remote: self.rc == Rc::RemoteFail,
            message: self.describe(resource, f),
        })
    }
}

/// A callback that failed: which resource, whether the service was only
/// unavailable (`ESLURM_HRES_REMOTE_FAIL`: the job stays pending, the node
/// is not drained), and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub resource: String,
    pub remote: bool,
    pub message: String,
}

/// The call's last message worth a reason.
struct Said(Option<String>);

/// Installed before the script runs: return codes, and the log functions
/// formatting as `string.format` does.
const PRELUDE: &str = r#"
local emit = ...
slurm = {
  SUCCESS = 0, ERROR = -1,
  ESLURM_HRES_REMOTE_FAIL = 3300,
  ESLURM_HRES_MAINTENANCE_DISABLE = 3301,
  ESLURM_HRES_MAINTENANCE_DOWN = 3302,
}
for _, level in ipairs({ "error", "info", "verbose", "debug", "debug2", "debug3", "debug4", "debug5" }) do
  slurm["log_" .. level] = function(fmt, ...) emit(level, string.format(fmt, ...)) end
end
slurm.user_msg = function(fmt, ...) emit("user", string.format(fmt, ...)) end
"#;

/// How long a script's top level may run when it is loaded.
const LOAD_DEADLINE: Duration = Duration::from_secs(5);

/// The file's identity for reloading: modified time and length.
type Stamp = Option<(SystemTime, u64)>;

fn stamp(path: &Path) -> Stamp {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

pub struct Script {
    resource: String,
    path: PathBuf,
    stamp: Stamp,
    /// The stamp of a version that failed to load, so it is reported once.
    refused: Stamp,
    lua: Lua,
}

impl std::fmt::Debug for Script {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Script").field("resource", &self.resource).field("path", &self.path).finish()
    }
}

impl Script {
    /// Loads `path` for `resource` into a new state. The error names the file
    /// and, for a missing function, the function.
    pub fn load(resource: &str, path: &Path) -> Result<Script, String> {
        let st = stamp(path);
        let lua = fresh(resource, path)?;
        Ok(Script { resource: resource.to_string(), path: path.to_path_buf(), stamp: st, refused: None, lua })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reloads the script if its file changed. `Err` once per bad version;
    /// the last good state stays in use.
    pub fn refresh(&mut self) -> Result<bool, String> {
        let now = stamp(&self.path);
        if now == self.stamp || now == self.refused {
            return Ok(false);
        }
        match fresh(&self.resource, &self.path) {
            Ok(lua) => {
                self.lua = lua;
                self.stamp = now;
                self.refused = None;
                Ok(true)
            }
            Err(e) => {
                self.refused = now;
                Err(e)
            }
        }
    }

    /// Whether the script defines `f` (for the optional functions).
    pub fn has(&self, f: &str) -> bool {
        matches!(self.lua.globals().get::<Value>(f), Ok(Value::Function(_)))
    }

    /// Calls `f` with what `args` builds in this state, within `deadline`.
    pub fn call<A, B>(&self, f: &str, args: B, deadline: Option<Duration>) -> Outcome
    where
        A: IntoLuaMulti,
        B: FnOnce(&Lua) -> mlua::Result<A>,
    {
        call(&self.lua, f, args, deadline)
    }

    /// The state itself, to build tables a call returns through (maintenance reads its `layers` back).
    pub fn lua(&self) -> &Lua {
        &self.lua
    }
}

/// What one Lua state may allocate: a script past it gets Lua's "not
/// enough memory" error, which fails the call as any other error does,
/// rather than growing the controller (or a node's supervisor) without bound.
pub const MEMORY_LIMIT: usize = 64 << 20;

/// A new state with the script loaded and checked.
fn fresh(resource: &str, path: &Path) -> Result<Lua, String> {
    let at = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{at}: cannot read: {e}"))?;
    let lua = Lua::new();
    lua.set_memory_limit(MEMORY_LIMIT).map_err(|e| format!("{at}: cannot limit its memory: {e}"))?;
    let name = resource.to_string();
    let emit = lua
        .create_function(move |lua, (level, msg): (String, String)| {
            match level.as_str() {
                "error" => tracing::error!(resource = %name, "hres/lua: {msg}"),
                "info" | "user" => tracing::info!(resource = %name, "hres/lua: {msg}"),
                "verbose" | "debug" => tracing::debug!(resource = %name, "hres/lua: {msg}"),
                _ => tracing::trace!(resource = %name, "hres/lua: {msg}"),
            }
            if matches!(level.as_str(), "error" | "user") {
                lua.set_app_data(Said(Some(msg)));
            }
            Ok(())
        })
        .and_then(|emit| lua.load(PRELUDE).set_name("=slurm").call::<()>(emit));
    emit.map_err(|e| format!("{at}: cannot set up the slurm table: {e}"))?;
    let loaded = with_deadline(&lua, Some(LOAD_DEADLINE), || {
        lua.load(text.as_str()).set_name(format!("@{at}")).exec()
    });
    loaded.map_err(|e| format!("{at}: cannot load: {}", first_line(&e.to_string())))?;
    for f in func::REQUIRED {
        if !matches!(lua.globals().get::<Value>(f), Ok(Value::Function(_))) {
            return Err(format!("{at}: function {f} is not defined"));
        }
    }
    Ok(lua)
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

/// Runs `body` with an instruction hook that fails it once `deadline` passed.
fn with_deadline<T>(
    lua: &Lua,
    deadline: Option<Duration>,
    body: impl FnOnce() -> mlua::Result<T>,
) -> mlua::Result<T> {
    let Some(limit) = deadline else { return body() };
    let end = Instant::now() + limit;
    let hooked = lua.set_hook(HookTriggers::new().every_nth_instruction(1000), move |_, _| {
        if Instant::now() >= end {
            Err(mlua::Error::runtime(format!("timed out after {} ms", limit.as_millis())))
        } else {
            Ok(VmState::Continue)
        }
    });
    let out = hooked.and_then(|()| body());
    lua.remove_hook();
    out
}

/// Calls global `f` of `lua`; see [`Script::call`].
pub fn call<A, B>(lua: &Lua, f: &str, args: B, deadline: Option<Duration>) -> Outcome
where
    A: IntoLuaMulti,
    B: FnOnce(&Lua) -> mlua::Result<A>,
{
    lua.set_app_data(Said(None));
    let out = with_deadline(lua, deadline, || {
        let function: mlua::Function =
            lua.globals().get(f).map_err(|_| mlua::Error::runtime(format!("function {f} is not defined")))?;
        function.call::<MultiValue>(args(lua)?)
    });
    let said = lua.remove_app_data::<Said>().and_then(|s| s.0);
    match out {
        Ok(values) => {
            let mut it = values.into_iter();
            let code = match it.next() {
                Some(Value::Integer(i)) => Some(i),
                Some(Value::Number(n)) if n.fract() == 0.0 => Some(n as i64),
                _ => None,
            };
            let payload = match it.next() {
                Some(Value::String(s)) => Some(s.to_string_lossy()),
                _ => None,
            };
            Outcome { rc: Rc::from_code(code), payload, message: said }
        }
        Err(e) => Outcome::failed(format!("{f}: {}", first_line(&lua_error(&e)))),
    }
}

/// The innermost message of a Lua error (a callback's error wraps the hook's).
fn lua_error(e: &mlua::Error) -> String {
    match e {
        mlua::Error::CallbackError { cause, .. } => lua_error(cause),
        mlua::Error::RuntimeError(m) => m.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{REMOTE_FAIL, tables};

    /// Every required function, returning what `body` says for the pre-run.
    fn script(prerun: &str) -> String {
        let mut s: String = func::REQUIRED
            .iter()
            .filter(|f| **f != func::PRERUN)
            .map(|f| format!("function {f}() return slurm.SUCCESS end\n"))
            .collect();
        s.push_str(&format!("function {}(ctx, job, prep)\n{prerun}\nend\n", func::PRERUN));
        s
    }

    fn load(text: &str) -> Result<(tempfile::TempDir, Script), String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.lua");
        std::fs::write(&path, text).unwrap();
        Script::load("qpu", &path).map(|s| (dir, s))
    }

    fn prerun(s: &Script, deadline: Option<Duration>) -> Outcome {
        s.call(func::PRERUN, |lua| Ok((tables::ctx(lua, "qpu", &[])?, 1, 2)), deadline)
    }

    #[test]
    fn a_script_that_allocates_without_bound_fails_its_call() {
        let grow = "local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 1024) .. i end";
        let (_d, s) = load(&script(grow)).unwrap();
        let out = prerun(&s, None);
        assert!(matches!(out.rc, Rc::Error(_)), "{out:?}");
        assert!(out.message.as_deref().unwrap_or("").contains("memory"), "{out:?}");
        let (_d, s) = load(&script("return slurm.SUCCESS, 'ok'")).unwrap();
        assert_eq!(prerun(&s, None).rc, Rc::Success, "a fresh state is not held to another's use");
    }

    #[test]
    fn return_codes_payloads_and_messages() {
        let (_d, s) = load(&script("return slurm.SUCCESS, 'token=1'")).unwrap();
        assert_eq!(
            prerun(&s, None),
            Outcome { rc: Rc::Success, payload: Some("token=1".into()), message: None }
        );
        let (_d, s) = load(&script("return 'not a number'")).unwrap();
        assert_eq!(prerun(&s, None).rc, Rc::Success, "a non-numeric return is success");
        let (_d, s) = load(&script("")).unwrap();
        assert_eq!(prerun(&s, None).rc, Rc::Success, "no return is success");
        let (_d, s) = load(&script("return slurm.ESLURM_HRES_REMOTE_FAIL")).unwrap();
        assert_eq!(prerun(&s, None).rc, Rc::RemoteFail);
        assert_eq!(REMOTE_FAIL, 3300);
        let (_d, s) = load(&script("slurm.user_msg('no %s today', 'qpus') return slurm.ERROR")).unwrap();
        let out = prerun(&s, None);
        assert_eq!((out.rc, out.message.as_deref()), (Rc::Error(-1), Some("no qpus today")));
        assert_eq!(out.describe("qpu", func::PRERUN), "qpu: no qpus today");
        let (_d, s) = load(&script("error('boom')")).unwrap();
        let out = prerun(&s, None);
        assert!(out.message.as_deref().unwrap().contains("boom"), "{out:?}");
    }

    #[test]
    fn a_call_past_its_deadline_fails() {
        let (_d, s) = load(&script("while true do end")).unwrap();
        let out = prerun(&s, Some(Duration::from_millis(50)));
        assert_eq!(out.rc, Rc::Error(-1));
        assert!(out.message.unwrap().contains("timed out after 50 ms"));
        // The state stays usable, and the hook is gone for calls without a deadline.
        assert!(s.has(func::PRERUN));
    }

    #[test]
    fn load_errors_name_the_file_and_the_function() {
        let missing = script("").replace(func::TASK_EPILOG, "something_else");
        let e = load(&missing).unwrap_err();
        assert!(e.ends_with("p.lua: function hres_node_task_epilog is not defined"), "{e}");
        let e = load("function (").unwrap_err();
        assert!(e.contains("p.lua: cannot load:"), "{e}");
        let e = Script::load("qpu", Path::new("/nonexistent/x.lua")).unwrap_err();
        assert!(e.starts_with("/nonexistent/x.lua: cannot read"), "{e}");
    }

    #[test]
    fn a_changed_script_is_reloaded_and_a_broken_one_kept_out() {
        let (dir, mut s) = load(&script("return 0, 'one'")).unwrap();
        let path = dir.path().join("p.lua");
        s.lua().globals().set("kept", 1).unwrap();
        std::fs::write(&path, script("return 0, 'twice'")).unwrap();
        assert_eq!(s.refresh(), Ok(true));
        assert_eq!(prerun(&s, None).payload.as_deref(), Some("twice"));
        assert!(s.lua().globals().get::<Option<i64>>("kept").unwrap().is_none(), "globals dropped");
        std::fs::write(&path, "not lua at all!").unwrap();
        assert!(s.refresh().is_err());
        assert_eq!(s.refresh(), Ok(false), "reported once");
        assert_eq!(prerun(&s, None).payload.as_deref(), Some("twice"), "the last good script stays");
    }
}
