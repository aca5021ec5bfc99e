//! The QOS pane: one row per QOS, Slurm's `show qos` columns.

use crate::model::format;
use crate::model::table::{
    Column, Detail, Row, SortKey, TableModel, Target, filter_and_sort, num_key, text_key,
};
use crate::model::view::PaneView;
use spur_proto::v1::Qos;

const fn col(name: &'static str, priority: u8, max: u16, numeric: bool) -> Column {
    Column { name, priority, max, numeric, sparse: false }
}

pub const COLUMNS: &[Column] = &[
    col("Name", 0, 16, false),
    col("Priority", 1, 10, true),
    col("PreemptMode", 3, 11, false),
    col("Preempt", 5, 16, false),
    col("Flags", 8, 14, false),
    col("UsageFactor", 7, 11, true),
    col("GrpTRES", 2, 22, false),
    col("GrpWall", 9, 11, true),
    col("MaxTRES", 4, 22, false),
    col("MaxWall", 3, 11, true),
    col("MaxTRESPU", 6, 22, false),
    col("MaxJobsPU", 4, 9, true),
    col("MaxSubmitPU", 6, 11, true),
];

fn row(q: &Qos) -> Row {
    let cells = vec![
        q.name.clone(),
        q.priority.to_string(),
        q.preempt_mode.clone(),
        format::list(&q.preempt),
        format::list(&q.flags),
        format::factor(q.usage_factor),
        q.grp_tres.clone(),
        format::wall(q.grp_wall_minutes),
        q.max_tres_per_job.clone(),
        format::wall(q.max_wall_minutes),
        q.max_tres_per_user.clone(),
        format::limit(q.max_jobs_per_user),
        format::limit(q.max_submit_jobs_per_user),
    ];
    let sort = vec![
        text_key(&q.name),
        SortKey::Num(q.priority as f64),
        text_key(&q.preempt_mode),
        text_key(&cells[3]),
        text_key(&cells[4]),
        SortKey::Num(q.usage_factor),
        text_key(&q.grp_tres),
        num_key(q.grp_wall_minutes),
        text_key(&q.max_tres_per_job),
        num_key(q.max_wall_minutes),
        text_key(&q.max_tres_per_user),
        num_key(q.max_jobs_per_user),
        num_key(q.max_submit_jobs_per_user),
    ];
    Row::new(q.name.clone(), Target::Qos(q.name.clone()), cells, sort)
}

pub fn table(qos: &[Qos], view: &PaneView) -> TableModel {
    let rows: Vec<Row> = qos.iter().map(row).collect();
    let total = rows.len();
    TableModel { columns: COLUMNS, rows: filter_and_sort(rows, view).into(), total, cell_widths: None }
}

pub fn detail(qos: &[Qos], key: &str) -> Option<Detail> {
    let q = qos.iter().find(|q| q.name == key)?;
    let f = |label: &str, value: String| (label.to_string(), value);
    let mut fields = vec![
        f("Name", q.name.clone()),
        f("Description", q.description.clone()),
        f("Priority", q.priority.to_string()),
        f("PreemptMode", q.preempt_mode.clone()),
        f("Preempt", format::list(&q.preempt)),
        f("PreemptExemptTime", q.preempt_exempt_time_secs.map(format::seconds).unwrap_or_default()),
        f("UsageFactor", format::factor(q.usage_factor)),
        f("Flags", format::list(&q.flags)),
        f("GrpTRES", q.grp_tres.clone()),
        f("GrpWall", format::wall(q.grp_wall_minutes)),
        f("GrpSubmit", format::limit(q.grp_submit)),
        f("MaxTRES", q.max_tres_per_job.clone()),
        f("MaxWall", format::wall(q.max_wall_minutes)),
        f("MaxTRESPU", q.max_tres_per_user.clone()),
        f("MaxJobsPU", format::limit(q.max_jobs_per_user)),
        f("MaxSubmitPU", format::limit(q.max_submit_jobs_per_user)),
        f("MaxSubmitPA", format::limit(q.max_submit_jobs_per_account)),
        f("IdleFillPreemptable", if q.idle_fill_preemptable { "yes" } else { "no" }.into()),
    ];
    if q.synthetic {
        fields.push(f("Note", "placeholder shown while no QOS exists; it cannot be edited".into()));
    }
    Some(Detail { title: format!("QOS {}", q.name), crumb: q.name.clone(), fields, body: Vec::new() })
}
