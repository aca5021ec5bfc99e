//! What the callbacks receive, as plain data, and each as the Lua table the
//! page lists. [`Prep`] is fixed when the job starts and travels with its
//! launch; the nodes read it from a JSON file the job can read too.

use mlua::{Lua, Table};
use serde::{Deserialize, Serialize};

/// `[(name, value)]` as a JSON object, in order, so a job reads `config.path`.
mod pairs {
    use serde::de::{MapAccess, Visitor};
    use serde::ser::SerializeMap;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(v.len()))?;
        for (k, x) in v {
            m.serialize_entry(k, x)?;
        }
        m.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
        struct Pairs;
        impl<'de> Visitor<'de> for Pairs {
            type Value = Vec<(String, String)>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of strings")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut out = vec![];
                while let Some(kv) = a.next_entry()? {
                    out.push(kv);
                }
                Ok(out)
            }
        }
        d.deserialize_map(Pairs)
    }
}

/// `prep`: what the nodes receive about one resource of a job.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Prep {
    pub name: String,
    /// The plugin configuration (`path` among it), in resources.yaml order.
    #[serde(with = "pairs")]
    pub config: Vec<(String, String)>,
    #[serde(with = "pairs")]
    pub plugin_args: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<String>,
    /// The layers the job holds.
    pub layers: Vec<PrepLayer>,
}

impl Prep {
    /// The script's path (`config` entry `path`).
    pub fn path(&self) -> Option<&str> {
        spur_sched::model::config_path(&self.config)
    }
}

/// One layer a job holds: the amount charged and the job's nodes under it (a hostlist).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PrepLayer {
    pub name: String,
    pub count: u64,
    pub nodes: String,
}

/// `job`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct JobInfo {
    pub job_id: u64,
    /// Unique per run of the job: `JOBID.RUN` (a requeue starts a new run).
    pub sluid: String,
    pub user_id: u32,
    pub user_name: Option<String>,
    pub group_id: u32,
    pub account: Option<String>,
    pub partition: String,
    /// A hostlist.
    pub nodes: String,
    /// Unix seconds.
    pub end_time: i64,
}

/// One entry of `layers` for create context and maintenance.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LayerView {
    pub name: String,
    /// A hostlist.
    pub nodes: String,
    /// -1 is infinite.
    pub total: i64,
    pub used: u64,
    pub disable_layer: bool,
}

/// What maintenance left on one layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LayerMark {
    pub disable_layer: bool,
    pub down: bool,
}

fn pairs(lua: &Lua, kv: &[(String, String)]) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    for (k, v) in kv {
        t.set(k.as_str(), v.as_str())?;
    }
    Ok(t)
}

/// `preps` in resources.yaml order, or reversed (the epilogs).
pub fn in_order(preps: &[Prep], reverse: bool) -> Vec<&Prep> {
    let mut order: Vec<&Prep> = preps.iter().collect();
    if reverse {
        order.reverse();
    }
    order
}

/// `ctx, job, prep`: the arguments of the controller's job callbacks.
pub fn job_args(
    lua: &Lua,
    config: &[(String, String)],
    job: &JobInfo,
    p: &Prep,
    async_running: bool,
) -> mlua::Result<(Table, Table, Table)> {
    Ok((ctx(lua, &p.name, config)?, self::job(lua, job)?, prep(lua, p, async_running)?))
}

/// `ctx`: `name` and `config`.
pub fn ctx(lua: &Lua, name: &str, config: &[(String, String)]) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("name", name)?;
    t.set("config", pairs(lua, config)?)?;
    Ok(t)
}

/// `args`: the plugin arguments, empty when none.
pub fn args(lua: &Lua, args: &[(String, String)]) -> mlua::Result<Table> {
    pairs(lua, args)
}

pub fn layers(lua: &Lua, layers: &[LayerView]) -> mlua::Result<Table> {
    let out = lua.create_table()?;
    for l in layers {
        let t = lua.create_table()?;
        t.set("name", l.name.as_str())?;
        t.set("nodes", l.nodes.as_str())?;
        t.set("total", l.total)?;
        t.set("used", l.used)?;
        t.set("disable_layer", l.disable_layer)?;
        out.push(t)?;
    }
    Ok(out)
}

/// Reads back `disable_layer` and `down` of each layer, in order; a layer the
/// script removed or replaced by a non-table keeps what it had.
pub fn read_marks(t: &Table, before: &[LayerView]) -> Vec<LayerMark> {
    (before.iter().enumerate())
        .map(|(i, l)| match t.get::<Option<Table>>(i + 1) {
            Ok(Some(row)) => LayerMark {
                disable_layer: row.get::<Option<bool>>("disable_layer").ok().flatten().unwrap_or(false),
                down: row.get::<Option<bool>>("down").ok().flatten().unwrap_or(false),
            },
            _ => LayerMark { disable_layer: l.disable_layer, down: false },
        })
        .collect()
}

pub fn job(lua: &Lua, j: &JobInfo) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("job_id", j.job_id)?;
    t.set("sluid", j.sluid.as_str())?;
    t.set("user_id", j.user_id)?;
    t.set("user_name", j.user_name.as_deref())?;
    t.set("group_id", j.group_id)?;
    t.set("account", j.account.as_deref())?;
    t.set("partition", j.partition.as_str())?;
    t.set("nodes", j.nodes.as_str())?;
    t.set("end_time", j.end_time)?;
    Ok(t)
}

/// `prep`; `async_running` is true only in revoke and controller epilog
/// while an asynchronous pre-run has not stored its result.
pub fn prep(lua: &Lua, p: &Prep, async_running: bool) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("name", p.name.as_str())?;
    t.set("config", pairs(lua, &p.config)?)?;
    t.set("plugin_args", pairs(lua, &p.plugin_args)?)?;
    t.set("payload", p.payload.as_deref())?;
    t.set("async_running", async_running)?;
    let layers = lua.create_table()?;
    for l in &p.layers {
        let row = lua.create_table()?;
        row.set("name", l.name.as_str())?;
        row.set("count", l.count)?;
        row.set("nodes", l.nodes.as_str())?;
        layers.push(row)?;
    }
    t.set("layers", layers)?;
    Ok(t)
}

/// `env`: looked up by name, not iterable, and writes change nothing.
pub fn env(lua: &Lua, vars: &[(String, String)]) -> mlua::Result<Table> {
    let inner = pairs(lua, vars)?;
    let proxy: Table = lua
        .load(
            r#"local t = ...
            return setmetatable({}, {
              __index = function(_, k) return t[k] end,
              __newindex = function() end,
              __pairs = function() error("env cannot be iterated") end,
            })"#,
        )
        .set_name("=env")
        .call(inner)?;
    Ok(proxy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_reads_by_name_ignores_writes_and_refuses_iteration() {
        let lua = Lua::new();
        let e = env(&lua, &[("HOME".into(), "/root".into())]).unwrap();
        lua.globals().set("env", e).unwrap();
        let home: String = lua.load("env.X = 'y'; return env.HOME").eval().unwrap();
        assert_eq!(home, "/root");
        assert_eq!(lua.load("return env.X").eval::<Option<String>>().unwrap(), None);
        assert!(lua.load("for k in pairs(env) do end").exec().is_err());
    }

    #[test]
    fn a_prep_is_json_objects_in_order_and_reads_back() {
        let p = Prep {
            name: "qpu".into(),
            config: vec![("path".into(), "/q.lua".into()), ("a".into(), "1".into())],
            plugin_args: vec![("mode".into(), "fast".into())],
            payload: Some("token=1".into()),
            layers: vec![PrepLayer { name: "q1".into(), count: 1, nodes: "node01".into() }],
        };
        let text = serde_json::to_string(&p).unwrap();
        assert!(
            text.contains(r#""config":{"path":"/q.lua","a":"1"},"plugin_args":{"mode":"fast"}"#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Prep>(&text).unwrap(), p);
    }

    #[test]
    fn maintenance_marks_read_back_per_layer() {
        let lua = Lua::new();
        let before = vec![
            LayerView { name: "a".into(), disable_layer: true, ..Default::default() },
            LayerView { name: "b".into(), ..Default::default() },
        ];
        let t = layers(&lua, &before).unwrap();
        lua.globals().set("layers", t.clone()).unwrap();
        lua.load("layers[1].disable_layer = false; layers[2].down = true").exec().unwrap();
        let marks = read_marks(&t, &before);
        assert_eq!(marks[0], LayerMark { disable_layer: false, down: false });
        assert_eq!(marks[1], LayerMark { disable_layer: false, down: true });
    }
}
