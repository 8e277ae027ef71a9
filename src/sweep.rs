//! Sweeps: one base scenario (or one per series), a grid or list of parameter values set by
//! JSON path, times seeds; run in parallel, written as a row per run plus rows aggregated over
//! seeds (mean and 95 % confidence interval).
//!
//! # Sweep files (`causim-sweep/1`)
//!
//! ```json
//! {
//!   "format": "causim-sweep/1",
//!   "name": "fig1-dax",
//!   "description": "Anomaly rate vs eventually consistent cache nodes (CausalMesh Fig. 1).",
//!   "base": "../eventual/fig1-dax.json",
//!   "set": {"workload.generator.workflows_max": 2000},
//!   "series": [{"label": "eventual", "set": {}}],
//!   "grid": [{"param": "topology.servers", "values": [1, 2, 4, 8]}],
//!   "points": [{"faults.loss_probability": 0.0}],
//!   "seeds": {"first": 1, "count": 5},
//!   "quick": {"seeds": {"count": 2}, "set": {"workload.generator.workflows_max": 500},
//!             "values": {"topology.servers": [1, 8]}, "series": ["eventual"]}
//! }
//! ```
//!
//! - `base` (relative to the sweep file) is the scenario every run starts from; a series may
//!   name its own `base`. `set` overrides fields by JSON path (`a.b[2].c`; missing objects are
//!   created), first the sweep's, then the series', then the point's.
//! - `series` are the curves of a figure (one per system or mutant), labelled.
//! - `grid` axes multiply; an axis may set several paths together (`"param": ["a", "b"]`,
//!   `"values": [[1, 2], [3, 4]]`). `points` is an explicit list of override objects,
//!   multiplied with the grid. The order of points is series, then points, then the grid
//!   (first axis slowest).
//! - `seeds`: `{"first", "count"}` or a list. Default: seed 1 only.
//! - `timeline` (`{"bucket_ns", "until_ns"}`) adds each operation kind's latency per interval
//!   of invocation time to every row, read from the run's history (a time series).
//! - `quick` shrinks the sweep for `--quick` (and `causim reproduce --quick`): other seeds,
//!   more overrides, other values for named axes (by their first path), fewer series.
//!
//! # Determinism
//!
//! Each run is a pure function of its resolved scenario and seed. Runs are distributed over
//! threads in any order and their rows sorted by (point, seed) before anything is written, so
//! outputs are byte-identical whatever the thread count, the shard split or a resumption.

use causim_pipeline::run::{self, RunOptions, RunReport};
use causim_pipeline::scenario::{LoadedScenario, ScenarioError, located, parse_located};
use causim_sim::error::FieldError;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

pub const SWEEP_FORMAT: &str = "causim-sweep/1";
pub const RESULTS_FORMAT: &str = "causim-sweep-results/1";
/// Points × seeds a sweep may have (a typo in a grid should not start a year of runs).
pub const JOBS_MAX: usize = 1_000_000;

// ---------------------------------------------------------------------------------------------
// The file format

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    #[serde(default)]
    pub format: Option<String>,
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// The base scenario, relative to the sweep file. Required unless every series has one.
    #[serde(default)]
    pub base: Option<String>,
    #[serde(default)]
    pub set: Map<String, Value>,
    #[serde(default)]
    pub series: Vec<SeriesSpec>,
    #[serde(default)]
    pub grid: Vec<Axis>,
    #[serde(default)]
    pub points: Vec<Map<String, Value>>,
    #[serde(default)]
    pub seeds: Option<Seeds>,
    #[serde(default)]
    pub quick: Option<QuickSpec>,
    /// Stop a series' walk along the last grid axis (per seed) after the first run whose
    /// metric is above the bound: the runs past a saturation knee are long and say nothing new.
    #[serde(default)]
    pub until: Option<Until>,
    /// `{"a": "b"}`: after every override, multiply the number at path `a` by the number at
    /// path `b` (a per-server load times the servers). The row keeps the given value under `a`
    /// and the product under `a×b`.
    #[serde(default)]
    pub multiply: BTreeMap<String, String>,
    /// Also report every operation kind's latency per interval of invocation time, read from
    /// each run's history: a time series (a latency spike around a reconfiguration, say).
    #[serde(default)]
    pub timeline: Option<Timeline>,
}

/// `{"bucket_ns": 5000000, "until_ns": 400000000}`: rows get `timeline.<kind>.<start>.p50_ms`,
/// `.p99_ms` and `.count` for the operations invoked in `[start, start + bucket_ns)` (start in
/// ns, a multiple of `bucket_ns`), up to `until_ns` (at most [`TIMELINE_BUCKETS_MAX`] intervals).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timeline {
    pub bucket_ns: u64,
    pub until_ns: u64,
}

/// Intervals a timeline may have (each adds three metrics per operation kind to every row).
pub const TIMELINE_BUCKETS_MAX: u64 = 1000;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Until {
    /// A metric name of the run rows (`latency_p99_ms`).
    pub metric: String,
    pub above: f64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeriesSpec {
    pub label: String,
    #[serde(default)]
    pub base: Option<String>,
    #[serde(default)]
    pub set: Map<String, Value>,
    /// This series' values for grid axes, by the axis's first path (a baseline that only
    /// makes sense at light load, say).
    #[serde(default)]
    pub values: BTreeMap<String, Vec<Value>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    pub param: ParamNames,
    pub values: Vec<Value>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum ParamNames {
    One(String),
    Several(Vec<String>),
}

impl ParamNames {
    pub fn names(&self) -> Vec<String> {
        match self {
            ParamNames::One(n) => vec![n.clone()],
            ParamNames::Several(v) => v.clone(),
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Seeds {
    List(Vec<u64>),
    Range {
        #[serde(default = "one")]
        first: u64,
        count: u64,
    },
}

fn one() -> u64 {
    1
}

impl Seeds {
    pub fn list(&self) -> Vec<u64> {
        match self {
            Seeds::List(v) => v.clone(),
            Seeds::Range { first, count } => (0..*count).map(|i| first + i).collect(),
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuickSpec {
    #[serde(default)]
    pub seeds: Option<Seeds>,
    #[serde(default)]
    pub set: Map<String, Value>,
    /// Replacement values for grid axes, by the axis's first path.
    #[serde(default)]
    pub values: BTreeMap<String, Vec<Value>>,
    #[serde(default)]
    pub points: Option<Vec<Map<String, Value>>>,
    /// Labels of the series to keep.
    #[serde(default)]
    pub series: Option<Vec<String>>,
}

// ---------------------------------------------------------------------------------------------
// Plans: the sweep resolved into points

/// One point of the sweep: a resolved scenario, run once per seed.
#[derive(Clone, Debug)]
pub struct Point {
    pub index: usize,
    pub series: Option<String>,
    /// The grid's and the point list's parameters, with their values.
    pub params: BTreeMap<String, Value>,
    pub scenario: LoadedScenario,
    /// FNV-1a of the resolved scenario's JSON: with the seed, the identity of a run.
    pub hash: String,
    /// Points of one chain (same series and everything but the last grid axis) are run in
    /// order when the sweep has `until`.
    pub chain: usize,
    /// Where in the sweep file each override came from (for errors found when running).
    origins: Vec<(String, String)>,
}

/// A grid axis resolved for one series: (its parameter paths, its values, its display name).
type ResolvedAxis = (Vec<String>, Vec<Vec<Value>>, String);

/// A sweep file resolved into points and seeds.
#[derive(Clone, Debug)]
pub struct SweepPlan {
    pub path: PathBuf,
    pub text: String,
    pub spec: SweepSpec,
    pub points: Vec<Point>,
    pub seeds: Vec<u64>,
}

/// One run to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Job {
    pub point: usize,
    pub seed: u64,
}

impl SweepPlan {
    /// Reads and resolves a sweep file; `quick` applies its `quick` section.
    pub fn from_file(path: &Path, quick: bool) -> Result<SweepPlan, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: path.to_path_buf(),
            line: None,
            column: None,
            error: FieldError::new("", "cannot read the sweep file"),
            io: Some(std::sync::Arc::new(e)),
        })?;
        SweepPlan::from_text(path, text, quick)
    }

    pub fn from_text(path: &Path, text: String, quick: bool) -> Result<SweepPlan, ScenarioError> {
        let mut spec: SweepSpec = parse_located(path, &text)?;
        let err = |field: &str, message: String| located(path, &text, field, message);
        causim_pipeline::scenario::check_output_name(&spec.name).map_err(|m| err("name", m))?;
        if let Some(f) = &spec.format
            && f != SWEEP_FORMAT
        {
            return Err(err("format", format!("unknown sweep format {f:?}, expected {SWEEP_FORMAT:?}")));
        }
        // Where each axis's values sit in the file (before `quick` may replace them).
        let mut axis_origin: Vec<String> = (0..spec.grid.len()).map(|i| format!("grid[{i}].values")).collect();
        let mut points_origin = "points".to_string();
        let mut set_origin: BTreeMap<String, String> = spec.set.keys().map(|k| (k.clone(), format!("set.{k}"))).collect();
        if quick && let Some(q) = spec.quick.clone() {
            if let Some(s) = q.seeds {
                spec.seeds = Some(s);
            }
            for (k, v) in q.set {
                set_origin.insert(k.clone(), format!("quick.set.{k}"));
                spec.set.insert(k, v);
            }
            for (name, values) in q.values {
                let Some(i) = spec.grid.iter().position(|a| a.param.names()[0] == name) else {
                    return Err(err(&format!("quick.values.{name}"), format!("no grid axis sets {name:?}")));
                };
                spec.grid[i].values = values;
                axis_origin[i] = format!("quick.values.{name}");
            }
            if let Some(p) = q.points {
                spec.points = p;
                points_origin = "quick.points".to_string();
            }
            if let Some(keep) = q.series {
                for (i, label) in keep.iter().enumerate() {
                    if !spec.series.iter().any(|s| &s.label == label) {
                        return Err(err(&format!("quick.series[{i}]"), format!("no series labelled {label:?}")));
                    }
                }
                spec.series.retain(|s| keep.contains(&s.label));
            }
        }
        if let Some(Seeds::Range { first, count }) = spec.seeds {
            if count > JOBS_MAX as u64 {
                return Err(err("seeds.count", format!("{count} seeds is more than {JOBS_MAX} runs")));
            }
            if first.checked_add(count.saturating_sub(1)).is_none() {
                return Err(err("seeds.first", format!("seeds {first} to {first} + {count} − 1 go past the largest seed, 2^64 − 1")));
            }
        }
        let seeds = spec.seeds.as_ref().map_or_else(|| vec![1], Seeds::list);
        if seeds.is_empty() {
            return Err(err("seeds", "a sweep needs at least one seed".into()));
        }
        // Grid axes: check shapes (per series, which may replace an axis's values).
        let build_axes = |series: Option<(usize, &SeriesSpec)>| -> Result<Vec<ResolvedAxis>, ScenarioError> {
            let mut axes = Vec::new();
            for (i, axis) in spec.grid.iter().enumerate() {
                let names = axis.param.names();
                if names.is_empty() {
                    return Err(err(&format!("grid[{i}].param"), "an axis needs at least one path".into()));
                }
                let (values, origin) =
                    match series.and_then(|(si, s)| s.values.get(&names[0]).map(|v| (v, format!("series[{si}].values.{}", names[0])))) {
                        Some((v, o)) => (v, o),
                        None => (&axis.values, axis_origin[i].clone()),
                    };
                if values.is_empty() {
                    return Err(err(&origin, "an axis needs at least one value".into()));
                }
                let mut rows = Vec::new();
                for (j, v) in values.iter().enumerate() {
                    if names.len() == 1 {
                        rows.push(vec![v.clone()]);
                    } else {
                        match v {
                            Value::Array(a) if a.len() == names.len() => rows.push(a.clone()),
                            _ => {
                                return Err(err(
                                    &format!("{origin}[{j}]"),
                                    format!("this axis sets {} paths, so each value must be an array of {}", names.len(), names.len()),
                                ));
                            }
                        }
                    }
                }
                axes.push((names, rows, origin));
            }
            Ok(axes)
        };
        for (si, s) in spec.series.iter().enumerate() {
            for name in s.values.keys() {
                if !spec.grid.iter().any(|a| &a.param.names()[0] == name) {
                    return Err(err(&format!("series[{si}].values.{name}"), format!("no grid axis sets {name:?}")));
                }
            }
        }
        let series: Vec<Option<SeriesSpec>> =
            if spec.series.is_empty() { vec![None] } else { spec.series.iter().cloned().map(Some).collect() };
        let point_list: Vec<Option<Map<String, Value>>> =
            if spec.points.is_empty() { vec![None] } else { spec.points.iter().cloned().map(Some).collect() };
        let mut total = 0usize;
        for (si, s) in series.iter().enumerate() {
            let axes = build_axes(s.as_ref().map(|s| (si, s)))?;
            total += point_list.len() * axes.iter().map(|a| a.1.len()).product::<usize>();
        }
        if total.saturating_mul(seeds.len()) > JOBS_MAX {
            return Err(err("grid", format!("{total} points × {} seeds is more than {JOBS_MAX} runs", seeds.len())));
        }
        if let Some(t) = &spec.timeline {
            if t.bucket_ns == 0 {
                return Err(err("timeline.bucket_ns", "an interval must be positive".into()));
            }
            if t.until_ns.div_ceil(t.bucket_ns) > TIMELINE_BUCKETS_MAX {
                return Err(err(
                    "timeline.until_ns",
                    format!("{} intervals of {} ns is more than {TIMELINE_BUCKETS_MAX}", t.until_ns.div_ceil(t.bucket_ns), t.bucket_ns),
                ));
            }
        }
        if spec.until.is_some() && spec.grid.is_empty() {
            return Err(err("until", "`until` walks the last grid axis, and there is no grid".into()));
        }
        let mut chains = 0usize;
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut bases: BTreeMap<PathBuf, LoadedScenario> = BTreeMap::new();
        let mut points = Vec::new();
        for (si, s) in series.iter().enumerate() {
            let (base_rel, base_field) = match (s.as_ref().and_then(|s| s.base.clone()), &spec.base) {
                (Some(b), _) => (b, format!("series[{si}].base")),
                (None, Some(b)) => (b.clone(), "base".to_string()),
                (None, None) => {
                    return Err(err(
                        if s.is_some() { "series" } else { "base" },
                        "no base scenario: give `base` or a base per series".into(),
                    ));
                }
            };
            let base_path = dir.join(&base_rel);
            if !bases.contains_key(&base_path) {
                let loaded =
                    LoadedScenario::from_file(&base_path).map_err(|e| err(&base_field, format!("the base scenario is invalid: {e}")))?;
                bases.insert(base_path.clone(), loaded);
            }
            let base = &bases[&base_path];
            let axes = build_axes(s.as_ref().map(|s| (si, s)))?;
            let combos: usize = axes.iter().map(|a| a.1.len()).product();
            let last_len = axes.last().map_or(1, |a| a.1.len());
            for (pi, p) in point_list.iter().enumerate() {
                for combo in 0..combos {
                    let chain = chains + combo / last_len;
                    let mut value: Value = serde_json::from_str(&base.text).expect("the base parsed once");
                    let mut origins: Vec<(String, String)> = Vec::new();
                    let mut params = BTreeMap::new();
                    let mut apply = |value: &mut Value, path: &str, v: &Value, origin: String| -> Result<(), ScenarioError> {
                        set_path(value, path, v.clone()).map_err(|m| err(&origin, format!("cannot set `{path}`: {m}")))?;
                        origins.push((path.to_string(), origin));
                        Ok(())
                    };
                    for (k, v) in &spec.set {
                        apply(&mut value, k, v, set_origin[k].clone())?;
                    }
                    if let Some(s) = s {
                        for (k, v) in &s.set {
                            apply(&mut value, k, v, format!("series[{si}].set.{k}"))?;
                        }
                    }
                    if let Some(p) = p {
                        for (k, v) in p {
                            apply(&mut value, k, v, format!("{points_origin}[{pi}].{k}"))?;
                            params.insert(k.clone(), v.clone());
                        }
                    }
                    let mut rest = combo;
                    let mut picks = vec![0; axes.len()];
                    for (ai, axis) in axes.iter().enumerate().rev() {
                        picks[ai] = rest % axis.1.len();
                        rest /= axis.1.len();
                    }
                    for (ai, (names, rows, origin)) in axes.iter().enumerate() {
                        for (ni, name) in names.iter().enumerate() {
                            let v = &rows[picks[ai]][ni];
                            let o = if names.len() == 1 {
                                format!("{origin}[{}]", picks[ai])
                            } else {
                                format!("{origin}[{}][{ni}]", picks[ai])
                            };
                            apply(&mut value, name, v, o)?;
                            params.insert(name.clone(), v.clone());
                        }
                    }
                    for (a, b) in &spec.multiply {
                        let get = |p: &str| get_path(&value, p).and_then(Value::as_f64);
                        let (Some(x), Some(y)) = (get(a), get(b)) else {
                            return Err(err(&format!("multiply.{a}"), format!("`{a}` and `{b}` must both be numbers in every point")));
                        };
                        let product = if get_path(&value, a).is_some_and(Value::is_u64) && get_path(&value, b).is_some_and(Value::is_u64) {
                            Value::from(x as u64 * y as u64)
                        } else {
                            Value::from(x * y)
                        };
                        set_path(&mut value, a, product.clone()).map_err(|m| err(&format!("multiply.{a}"), m))?;
                        params.insert(format!("{a}×{b}"), product);
                    }
                    let text = serde_json::to_string_pretty(&value).expect("values serialize") + "\n";
                    let hash = fnv1a(text.as_bytes());
                    let label = match &s {
                        Some(s) => format!("{} [{}]", base_path.display(), s.label),
                        None => base_path.display().to_string(),
                    };
                    let scenario = LoadedScenario::from_text(Path::new(&label), text).map_err(|e| {
                        let origin = origin_of(&origins, &e.error.path).unwrap_or(base_field.clone());
                        err(&origin, format!("the resolved scenario is invalid: field `{}`: {}", e.error.path, e.error.message))
                    })?;
                    points.push(Point {
                        index: points.len(),
                        series: s.as_ref().map(|s| s.label.clone()),
                        params,
                        scenario,
                        hash,
                        chain: if spec.until.is_some() { chain } else { chains + combo },
                        origins,
                    });
                }
                chains += combos;
            }
        }
        Ok(SweepPlan { path: path.to_path_buf(), text, spec, points, seeds })
    }

    /// Every run, in canonical order (point, then seed).
    pub fn jobs(&self) -> Vec<Job> {
        self.points.iter().flat_map(|p| self.seeds.iter().map(move |&seed| Job { point: p.index, seed })).collect()
    }

    /// An error found while running a point, located at the override that caused it.
    pub fn run_error(&self, point: &Point, e: &run::RunError) -> ScenarioError {
        match e {
            run::RunError::Scenario(se) => {
                let origin = origin_of(&point.origins, &se.error.path).unwrap_or_else(|| "base".to_string());
                located(
                    &self.path,
                    &self.text,
                    &origin,
                    format!("point {} (seed aside): field `{}`: {}", point.index, se.error.path, se.error.message),
                )
            }
            other => located(&self.path, &self.text, "", other.to_string()),
        }
    }
}

/// The origin of the override that set `field` or one of its ancestors or descendants.
fn origin_of(origins: &[(String, String)], field: &str) -> Option<String> {
    let related = |a: &str, b: &str| a == b || b.starts_with(&format!("{a}.")) || b.starts_with(&format!("{a}["));
    origins.iter().rev().find(|(p, _)| related(p, field) || related(field, p)).map(|(_, o)| o.clone())
}

/// Sets the value at a JSON path (`a.b[2].c`), creating missing objects.
pub fn set_path(root: &mut Value, path: &str, new: Value) -> Result<(), String> {
    let mut segments: Vec<Result<String, usize>> = Vec::new();
    for part in path.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if name.is_empty() && rest.is_empty() {
            return Err("empty path segment".into());
        }
        if !name.is_empty() {
            segments.push(Ok(name.to_string()));
        }
        while let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']').ok_or("unclosed `[`")?;
            segments.push(Err(after[..end].parse().map_err(|_| format!("bad index {:?}", &after[..end]))?));
            rest = &after[end + 1..];
        }
        if !rest.is_empty() {
            return Err(format!("unexpected {rest:?}"));
        }
    }
    let mut here = root;
    for (i, seg) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match seg {
            Ok(name) => {
                if here.is_null() {
                    *here = Value::Object(Map::new());
                }
                let Value::Object(map) = here else { return Err(format!("`{name}`'s parent is not an object")) };
                if last {
                    map.insert(name.clone(), new);
                    return Ok(());
                }
                here = map.entry(name.clone()).or_insert(Value::Null);
            }
            Err(idx) => {
                let Value::Array(a) = here else { return Err(format!("[{idx}]'s parent is not an array")) };
                let len = a.len();
                let slot = a.get_mut(*idx).ok_or(format!("index {idx} is out of range (length {len})"))?;
                if last {
                    *slot = new;
                    return Ok(());
                }
                here = slot;
            }
        }
    }
    Err("empty path".into())
}

/// The value at a JSON path, if any.
pub fn get_path<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    let mut here = root;
    for part in path.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            here = here.get(name)?;
        }
        while let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            here = here.get(after[..end].parse::<usize>().ok()?)?;
            rest = &after[end + 1..];
        }
    }
    Some(here)
}

pub fn fnv1a(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

// ---------------------------------------------------------------------------------------------
// Rows

/// The outcome of one run: parameters, seed, metrics, anomalies.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub sweep: String,
    pub point: usize,
    pub series: Option<String>,
    /// The protocol's catalogue name.
    pub protocol: String,
    pub params: BTreeMap<String, Value>,
    pub seed: u64,
    pub scenario_hash: String,
    pub passed: bool,
    pub invariant_violation: Option<String>,
    pub anomalies: BTreeMap<String, u64>,
    pub metrics: BTreeMap<String, f64>,
    /// Why the run ended without a report (a panic: a bug in causim); such a row has no
    /// metrics and counts as failed. Written to the journal only when set.
    pub error: Option<String>,
}

impl Row {
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "sweep": self.sweep, "point": self.point, "series": self.series, "protocol": self.protocol, "params": self.params,
            "seed": self.seed, "scenario_hash": self.scenario_hash, "passed": self.passed,
            "invariant_violation": self.invariant_violation, "anomalies": self.anomalies, "metrics": self.metrics,
        });
        if let Some(e) = &self.error {
            v["error"] = e.clone().into();
        }
        v
    }

    pub fn from_json(v: &Value) -> Option<Row> {
        Some(Row {
            sweep: v["sweep"].as_str()?.to_string(),
            point: v["point"].as_u64()? as usize,
            series: v["series"].as_str().map(String::from),
            protocol: v["protocol"].as_str()?.to_string(),
            params: v["params"].as_object()?.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            seed: v["seed"].as_u64()?,
            scenario_hash: v["scenario_hash"].as_str()?.to_string(),
            passed: v["passed"].as_bool()?,
            invariant_violation: v["invariant_violation"].as_str().map(String::from),
            anomalies: v["anomalies"].as_object()?.iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0))).collect(),
            metrics: v["metrics"].as_object()?.iter().filter_map(|(k, v)| Some((k.clone(), v.as_f64()?))).collect(),
            error: v["error"].as_str().map(String::from),
        })
    }

    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics.get(name).copied()
    }
}

/// The figures of one run, flattened to named numbers (units in the names).
///
/// Workflow latency in ms (`latency_p50_ms`, …), `throughput_per_s`, `abort_rate`, workflow
/// counts, messages and bytes, the busiest node's utilisation, `violations` (history-check
/// violations) and `anomaly_rate` (violations per workflow started), each protocol observation
/// as `obs.<name>.{mean,p50,p99,max,count}` and each final protocol metric as `pm.<name>`.
pub fn metrics_of(report: &RunReport) -> BTreeMap<String, f64> {
    let s = &report.summary;
    let mut m = BTreeMap::new();
    let ms = |ns: u64| ns as f64 / 1e6;
    let w = &s.workflows;
    m.insert("workflows_started".into(), w.started as f64);
    m.insert("workflows_completed".into(), w.completed as f64);
    m.insert("workflows_failed".into(), w.failed as f64);
    m.insert("workflows_unfinished".into(), w.unfinished as f64);
    m.insert("aborted_attempts".into(), w.aborted_attempts as f64);
    m.insert("abort_rate".into(), s.abort_rate);
    for (name, v) in crate::aborts::Aborts::of(s).metrics(w.started) {
        m.insert(name.into(), v);
    }
    m.insert("throughput_per_s".into(), s.throughput_per_s);
    let l = &s.workflow_latency_ns;
    m.insert("latency_mean_ms".into(), l.mean / 1e6);
    m.insert("latency_p50_ms".into(), ms(l.p50));
    m.insert("latency_p90_ms".into(), ms(l.p90));
    m.insert("latency_p99_ms".into(), ms(l.p99));
    m.insert("latency_p999_ms".into(), ms(l.p999));
    m.insert("latency_max_ms".into(), ms(l.max));
    m.insert("latency_count".into(), l.count as f64);
    for (kind, st) in &s.op_latency_ns {
        m.insert(format!("op.{kind}.p50_ms"), ms(st.p50));
        m.insert(format!("op.{kind}.p99_ms"), ms(st.p99));
        m.insert(format!("op.{kind}.p999_ms"), ms(st.p999));
        m.insert(format!("op.{kind}.mean_ms"), st.mean / 1e6);
    }
    m.insert("messages".into(), s.messages_total.count as f64);
    m.insert("message_bytes".into(), s.messages_total.bytes as f64);
    m.insert("messages_dropped".into(), s.messages_dropped as f64);
    m.insert("sim_time_s".into(), s.sim_time_ns as f64 / 1e9);
    m.insert("events".into(), s.events as f64);
    if let Some(u) = s.nodes.iter().map(|n| n.utilisation).reduce(f64::max) {
        m.insert("utilisation_max".into(), u);
    }
    // The caches next to the functions (CausalMesh Fig. 14's "CPU of cache servers").
    let colocated: Vec<f64> = s.nodes.iter().filter(|n| n.colocated_with_workers).map(|n| n.utilisation).collect();
    if !colocated.is_empty() {
        m.insert("utilisation_colocated_mean".into(), colocated.iter().sum::<f64>() / colocated.len() as f64);
    }
    for (name, st) in &s.observations {
        m.insert(format!("obs.{name}.mean"), st.mean);
        m.insert(format!("obs.{name}.p50"), st.p50 as f64);
        m.insert(format!("obs.{name}.p99"), st.p99 as f64);
        m.insert(format!("obs.{name}.max"), st.max as f64);
        m.insert(format!("obs.{name}.count"), st.count as f64);
    }
    for (name, v) in &s.protocol_metrics {
        m.insert(format!("pm.{name}"), *v);
    }
    let violations = report.check.as_ref().map_or(0, |c| c.violation_count);
    m.insert("violations".into(), violations as f64);
    m.insert("anomaly_rate".into(), violations as f64 / (w.started.max(1)) as f64);
    m.insert("failed".into(), if report.passed() { 0.0 } else { 1.0 });
    m.retain(|_, v| v.is_finite());
    m
}

pub fn row_of(plan: &SweepPlan, point: &Point, seed: u64, report: &RunReport) -> Row {
    let mut metrics = metrics_of(report);
    metrics.insert("servers".into(), point.scenario.scenario.topology.servers as f64);
    if let (Some(t), Some(history)) = (&plan.spec.timeline, &report.history) {
        metrics.extend(timeline_metrics(t, history));
    }
    Row {
        passed: report.passed(),
        invariant_violation: report.summary.invariant_violation.clone(),
        anomalies: report.check.as_ref().map_or_else(BTreeMap::new, |c| c.counts.iter().map(|(a, n)| (a.name().to_string(), *n)).collect()),
        metrics,
        ..point_row(plan, point, seed)
    }
}

/// The key of a timeline metric, by its interval's start: `timeline.write.15000000.p99_ms`.
pub fn timeline_key(kind: &str, start_ns: u64, statistic: &str) -> String {
    format!("timeline.{kind}.{start_ns}.{statistic}")
}

/// Latency per operation kind and interval of invocation time, from a history (JSON Lines).
fn timeline_metrics(t: &Timeline, history: &[u8]) -> BTreeMap<String, f64> {
    #[derive(Deserialize)]
    struct Line {
        kind: Option<String>,
        invoke_ns: Option<u64>,
        complete_ns: Option<u64>,
    }
    let mut buckets: BTreeMap<(String, u64), causim_sim::metrics::Histogram> = BTreeMap::new();
    for line in history.split(|&b| b == b'\n') {
        let Ok(Line { kind: Some(kind), invoke_ns: Some(i), complete_ns: Some(c) }) = serde_json::from_slice::<Line>(line) else {
            continue;
        };
        if i < t.until_ns {
            buckets.entry((kind, i / t.bucket_ns)).or_default().record(c.saturating_sub(i));
        }
    }
    let mut m = BTreeMap::new();
    for ((kind, b), h) in buckets {
        let (st, start) = (h.stats(), b * t.bucket_ns);
        m.insert(timeline_key(&kind, start, "p50_ms"), st.p50 as f64 / 1e6);
        m.insert(timeline_key(&kind, start, "p99_ms"), st.p99 as f64 / 1e6);
        m.insert(timeline_key(&kind, start, "count"), st.count as f64);
    }
    m
}

/// The row of a run that panicked (a bug in causim): failed, no metrics, the panic's message.
pub fn panic_row(plan: &SweepPlan, point: &Point, seed: u64, message: &str) -> Row {
    Row { error: Some(format!("panic (a bug in causim): {message}")), ..point_row(plan, point, seed) }
}

/// What names a run of `point` at `seed`; the outcome fields empty (not passed).
fn point_row(plan: &SweepPlan, point: &Point, seed: u64) -> Row {
    Row {
        sweep: plan.spec.name.clone(),
        point: point.index,
        series: point.series.clone(),
        protocol: point.scenario.scenario.protocol.name.clone(),
        params: point.params.clone(),
        seed,
        scenario_hash: point.hash.clone(),
        passed: false,
        invariant_violation: None,
        anomalies: BTreeMap::new(),
        metrics: BTreeMap::new(),
        error: None,
    }
}

/// The message a panic carried.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(no message)".into())
}

// ---------------------------------------------------------------------------------------------
// Aggregation over seeds

/// A point's figures over its seeds: mean and the half-width of the 95 % confidence interval
/// (Student's t; 0 with one seed).
#[derive(Clone, Debug, PartialEq)]
pub struct AggRow {
    pub sweep: String,
    pub point: usize,
    pub series: Option<String>,
    /// The protocol's catalogue name.
    pub protocol: String,
    pub params: BTreeMap<String, Value>,
    pub runs: usize,
    pub failed_runs: usize,
    pub anomalies: BTreeMap<String, u64>,
    pub metrics: BTreeMap<String, (f64, f64)>,
}

impl AggRow {
    pub fn to_json(&self) -> Value {
        let metrics: Map<String, Value> = self.metrics.iter().map(|(k, (m, c))| (k.clone(), json!({"mean": m, "ci95": c}))).collect();
        json!({
            "sweep": self.sweep, "point": self.point, "series": self.series, "protocol": self.protocol, "params": self.params,
            "runs": self.runs, "failed_runs": self.failed_runs, "anomalies": self.anomalies, "metrics": metrics,
        })
    }

    pub fn from_json(v: &Value) -> Option<AggRow> {
        Some(AggRow {
            sweep: v["sweep"].as_str()?.to_string(),
            point: v["point"].as_u64()? as usize,
            series: v["series"].as_str().map(String::from),
            protocol: v["protocol"].as_str()?.to_string(),
            params: v["params"].as_object()?.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            runs: v["runs"].as_u64()? as usize,
            failed_runs: v["failed_runs"].as_u64()? as usize,
            anomalies: v["anomalies"].as_object()?.iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0))).collect(),
            metrics: v["metrics"]
                .as_object()?
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), (v["mean"].as_f64()?, v["ci95"].as_f64().unwrap_or(0.0)))))
                .collect(),
        })
    }

    pub fn mean(&self, name: &str) -> Option<f64> {
        self.metrics.get(name).map(|m| m.0)
    }

    pub fn ci(&self, name: &str) -> f64 {
        self.metrics.get(name).map_or(0.0, |m| m.1)
    }
}

/// Student's t quantile for a two-sided 95 % interval with `df` degrees of freedom.
pub fn t95(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
        2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => 0.0,
        1..=30 => T[df - 1],
        31..=60 => 2.000,
        61..=120 => 1.980,
        _ => 1.960,
    }
}

/// Mean and 95 % CI half-width.
pub fn mean_ci(xs: &[f64]) -> (f64, f64) {
    let n = xs.len();
    if n == 0 {
        return (f64::NAN, 0.0);
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean, t95(n - 1) * (var / n as f64).sqrt())
}

/// Groups rows (sorted by point, seed) by point.
pub fn aggregate(rows: &[Row]) -> Vec<AggRow> {
    let mut out: Vec<AggRow> = Vec::new();
    let mut i = 0;
    while i < rows.len() {
        let mut j = i;
        while j < rows.len() && rows[j].point == rows[i].point && rows[j].sweep == rows[i].sweep {
            j += 1;
        }
        let group = &rows[i..j];
        let mut names: Vec<&String> = group.iter().flat_map(|r| r.metrics.keys()).collect();
        names.sort();
        names.dedup();
        let mut metrics = BTreeMap::new();
        for name in names {
            let xs: Vec<f64> = group.iter().filter_map(|r| r.metrics.get(name).copied()).collect();
            let (m, c) = mean_ci(&xs);
            if m.is_finite() && c.is_finite() {
                metrics.insert(name.clone(), (m, c));
            }
        }
        let mut anomalies = BTreeMap::new();
        for r in group {
            for (a, n) in &r.anomalies {
                *anomalies.entry(a.clone()).or_insert(0) += n;
            }
        }
        out.push(AggRow {
            sweep: group[0].sweep.clone(),
            point: group[0].point,
            series: group[0].series.clone(),
            protocol: group[0].protocol.clone(),
            params: group[0].params.clone(),
            runs: group.len(),
            failed_runs: group.iter().filter(|r| !r.passed).count(),
            anomalies,
            metrics,
        });
        i = j;
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Output files

/// `runs.jsonl`: the journal, one row per finished run, appended as runs finish (resumption
/// reads it). `runs.csv`, `aggregate.csv`, `results.json`: written sorted at the end.
pub const JOURNAL: &str = "runs.jsonl";
/// The build of causim that wrote the journal (see `build_fingerprint`).
pub const BUILD_MARKER: &str = "build.txt";

/// Identifies this build of causim: a hash of the running executable (models are compiled in,
/// so a changed model is a changed executable). A journal written by another build is not
/// resumed. `unknown` when the executable cannot be read.
pub fn build_fingerprint() -> &'static str {
    // Hashing the executable takes tens of milliseconds; `reproduce` asks once per sweep.
    static FINGERPRINT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    FINGERPRINT.get_or_init(|| std::env::current_exe().and_then(std::fs::read).map_or_else(|_| "unknown".into(), |bytes| fnv1a(&bytes)))
}

pub fn read_journal(path: &Path) -> Result<Vec<Row>, String> {
    let bytes = match std::fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let lines: Vec<&[u8]> = bytes.split(|c| *c == b'\n').collect();
    let mut rows = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let last = i + 1 == lines.len() || (i + 2 == lines.len() && lines[i + 1].is_empty());
        let parsed = std::str::from_utf8(line).ok().map(|l| (l.trim().is_empty(), serde_json::from_str::<Value>(l)));
        let v = match parsed {
            Some((true, _)) => continue,
            Some((false, Ok(v))) => v,
            // A last line cut short by an interrupted run is skipped; that run is simply done
            // again. Anything else unreadable is not a journal this sweep wrote.
            _ if last => continue,
            None => return Err(format!("{}:{}: not UTF-8 text, so not a sweep journal line", path.display(), i + 1)),
            Some((false, Err(e))) => return Err(format!("{}:{}: not a sweep row ({e})", path.display(), i + 1)),
        };
        rows.push(Row::from_json(&v).ok_or_else(|| format!("{}:{}: not a sweep row", path.display(), i + 1))?);
    }
    Ok(rows)
}

/// A row as read back from its journal line.
fn journal_row(line: &str) -> Row {
    serde_json::from_str::<Value>(line).ok().as_ref().and_then(Row::from_json).expect("a journal line written by to_json reads back")
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn number_text(x: f64) -> String {
    Value::from(x).to_string()
}

pub fn runs_csv(rows: &[Row]) -> String {
    let params = union(rows.iter().map(|r| r.params.keys()));
    let metrics = union(rows.iter().map(|r| r.metrics.keys()));
    let mut head = vec!["sweep".to_string(), "point".into(), "series".into(), "protocol".into()];
    head.extend(params.iter().cloned());
    head.extend(["seed".into(), "passed".into(), "anomalies".into(), "invariant_violation".into()]);
    head.extend(metrics.iter().cloned());
    head.push("scenario_hash".into());
    let mut out = head.iter().map(|h| csv_field(h)).collect::<Vec<_>>().join(",") + "\n";
    for r in rows {
        let mut f = vec![r.sweep.clone(), r.point.to_string(), r.series.clone().unwrap_or_default(), r.protocol.clone()];
        f.extend(params.iter().map(|p| r.params.get(p).map(value_text).unwrap_or_default()));
        f.push(r.seed.to_string());
        f.push(r.passed.to_string());
        f.push(r.anomalies.iter().map(|(a, n)| format!("{a}:{n}")).collect::<Vec<_>>().join(";"));
        f.push(r.invariant_violation.clone().unwrap_or_default());
        f.extend(metrics.iter().map(|m| r.metrics.get(m).map(|x| number_text(*x)).unwrap_or_default()));
        f.push(r.scenario_hash.clone());
        out += &(f.iter().map(|x| csv_field(x)).collect::<Vec<_>>().join(",") + "\n");
    }
    out
}

pub fn aggregate_csv(rows: &[AggRow]) -> String {
    let params = union(rows.iter().map(|r| r.params.keys()));
    let metrics = union(rows.iter().map(|r| r.metrics.keys()));
    let mut head = vec!["sweep".to_string(), "point".into(), "series".into(), "protocol".into()];
    head.extend(params.iter().cloned());
    head.extend(["runs".into(), "failed_runs".into(), "anomalies".into()]);
    for m in &metrics {
        head.push(m.clone());
        head.push(format!("{m}_ci95"));
    }
    let mut out = head.iter().map(|h| csv_field(h)).collect::<Vec<_>>().join(",") + "\n";
    for r in rows {
        let mut f = vec![r.sweep.clone(), r.point.to_string(), r.series.clone().unwrap_or_default(), r.protocol.clone()];
        f.extend(params.iter().map(|p| r.params.get(p).map(value_text).unwrap_or_default()));
        f.push(r.runs.to_string());
        f.push(r.failed_runs.to_string());
        f.push(r.anomalies.iter().map(|(a, n)| format!("{a}:{n}")).collect::<Vec<_>>().join(";"));
        for m in &metrics {
            match r.metrics.get(m) {
                Some((mean, ci)) => {
                    f.push(number_text(*mean));
                    f.push(number_text(*ci));
                }
                None => f.extend([String::new(), String::new()]),
            }
        }
        out += &(f.iter().map(|x| csv_field(x)).collect::<Vec<_>>().join(",") + "\n");
    }
    out
}

fn union<'a>(keys: impl Iterator<Item = impl Iterator<Item = &'a String>>) -> Vec<String> {
    let mut all: Vec<String> = keys.flatten().cloned().collect();
    all.sort();
    all.dedup();
    all
}

/// Writes `runs.csv`, `aggregate.csv` and `results.json` for sorted rows.
pub fn write_results(dir: &Path, name: &str, rows: &[Row]) -> Result<Vec<AggRow>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let agg = aggregate(rows);
    let write = |file: &str, text: String| crate::sweep_dir::write(&dir.join(file), text);
    write("runs.csv", runs_csv(rows))?;
    write("aggregate.csv", aggregate_csv(&agg))?;
    let json = json!({
        "format": RESULTS_FORMAT,
        "sweep": name,
        "runs": rows.iter().map(Row::to_json).collect::<Vec<_>>(),
        "aggregate": agg.iter().map(AggRow::to_json).collect::<Vec<_>>(),
    });
    write("results.json", serde_json::to_string_pretty(&json).expect("serializes") + "\n")?;
    Ok(agg)
}

/// Results read back: from a directory (its `results.json`) or a `results.json` file.
#[derive(Clone, Debug)]
pub struct Results {
    pub sweep: String,
    pub runs: Vec<Row>,
    pub aggregate: Vec<AggRow>,
}

pub fn read_results(path: &Path) -> Result<Results, String> {
    let file = if path.is_dir() { path.join("results.json") } else { path.to_path_buf() };
    let text = std::fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    if v["format"] != RESULTS_FORMAT {
        return Err(format!("{}: not sweep results (format {:?}, expected {RESULTS_FORMAT:?})", file.display(), v["format"]));
    }
    let runs = v["runs"].as_array().map(|a| a.iter().filter_map(Row::from_json).collect()).unwrap_or_default();
    let aggregate = v["aggregate"].as_array().map(|a| a.iter().filter_map(AggRow::from_json).collect()).unwrap_or_default();
    Ok(Results { sweep: v["sweep"].as_str().unwrap_or("").to_string(), runs, aggregate })
}

// ---------------------------------------------------------------------------------------------
// Running

/// How to run a sweep.
#[derive(Clone, Debug)]
pub struct SweepOptions {
    pub threads: usize,
    pub out_dir: PathBuf,
    /// `(i, n)`: run only the jobs whose canonical index is `i` mod `n`.
    pub shard: Option<(usize, usize)>,
    /// Ignore the journal (do every run again).
    pub fresh: bool,
    /// Print the progress bar.
    pub progress: bool,
}

/// What a sweep did.
#[derive(Clone, Debug)]
pub struct SweepOutcome {
    pub rows: Vec<Row>,
    pub aggregate: Vec<AggRow>,
    pub ran: usize,
    pub skipped: usize,
    pub wall_s: f64,
}

/// The units of work: runs of one chain and seed, in order along the last grid axis (one run
/// each without `until`), in canonical order.
pub fn units(plan: &SweepPlan) -> Vec<Vec<Job>> {
    let mut index: BTreeMap<(usize, u64), usize> = BTreeMap::new();
    let mut units: Vec<Vec<Job>> = Vec::new();
    for job in plan.jobs() {
        let key = (plan.points[job.point].chain, job.seed);
        match index.get(&key) {
            Some(&u) => units[u].push(job),
            None => {
                index.insert(key, units.len());
                units.push(vec![job]);
            }
        }
    }
    units
}

/// Runs the plan's jobs (those of the shard), skipping runs the journal already holds, and
/// writes the results.
pub fn run_sweep(plan: &SweepPlan, options: &SweepOptions) -> Result<SweepOutcome, String> {
    let started = std::time::Instant::now();
    crate::sweep_dir::check(&options.out_dir)?;
    std::fs::create_dir_all(&options.out_dir).map_err(|e| format!("cannot create {}: {e}", options.out_dir.display()))?;
    // Held until this sweep returns: a second sweep into the folder is refused meanwhile.
    let _lock = crate::sweep_dir::Lock::take(&options.out_dir)?;
    let shard = options.shard.unwrap_or((0, 1));
    crate::sweep_dir::mark_shard(&options.out_dir, &plan.spec.name, shard, false)?;
    // Every point's resolved scenario, so any run replays with `causim run <file> --seed S`.
    let scenario_dir = options.out_dir.join("scenarios");
    std::fs::create_dir_all(&scenario_dir).map_err(|e| format!("cannot create {}: {e}", scenario_dir.display()))?;
    for p in &plan.points {
        let file = scenario_dir.join(format!("point-{}.json", p.index));
        crate::sweep_dir::write(&file, &p.scenario.text)?;
    }
    let journal_path = options.out_dir.join(JOURNAL);
    // Rows from another build of causim may come from other models: run them again.
    let build_path = options.out_dir.join(BUILD_MARKER);
    let build = build_fingerprint();
    let stale = std::fs::read_to_string(&build_path).is_ok_and(|b| b.trim() != build);
    if stale && journal_path.exists() {
        eprintln!("sweep {}: the journal comes from another build of causim; running every point again", plan.spec.name);
    }
    if options.fresh || stale {
        let _ = std::fs::remove_file(&journal_path);
    }
    crate::sweep_dir::write(&build_path, format!("{build}\n"))?;
    let mut units = units(plan);
    if let Some((i, n)) = options.shard {
        units = units.into_iter().enumerate().filter(|(k, _)| k % n == i).map(|(_, u)| u).collect();
    }
    // Resumption: a run is done when the journal holds a row with its scenario hash and seed.
    let mut done: BTreeMap<(String, u64), Row> = BTreeMap::new();
    for r in read_journal(&journal_path)? {
        done.insert((r.scenario_hash.clone(), r.seed), r);
    }
    let relabel = |r: &Row, point: &Point| {
        let mut r = r.clone();
        r.sweep = plan.spec.name.clone();
        r.point = point.index;
        r.series = point.series.clone();
        r.params = point.params.clone();
        r
    };
    // The journal is rewritten with the rows this sweep can use, so stale rows go away.
    {
        let mut kept: Vec<Row> = Vec::new();
        for job in units.iter().flatten() {
            let point = &plan.points[job.point];
            if let Some(r) = done.get(&(point.hash.clone(), job.seed)) {
                kept.push(relabel(r, point));
            }
        }
        let text: String = kept.iter().map(|r| r.to_json().to_string() + "\n").collect();
        crate::sweep_dir::write(&journal_path, text)?;
    }
    let journal = Mutex::new(crate::sweep_dir::append(&journal_path)?);
    let label = match options.shard {
        Some((i, n)) => format!("sweep {} (shard {i}/{n})", plan.spec.name),
        None => format!("sweep {}", plan.spec.name),
    };
    let total_jobs: usize = units.iter().map(Vec::len).sum();
    let progress = Mutex::new(crate::progress::Progress::new(label, "runs", if options.progress { total_jobs as u64 } else { 0 }));
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let results: Mutex<Vec<Row>> = Mutex::new(Vec::new());
    let counts = Mutex::new((0usize, 0usize)); // (ran, reused)
    let first_error: Mutex<Option<String>> = Mutex::new(None);
    let threads = options.threads.max(1).min(units.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(unit) = units.get(k) else { return };
                    for (idx, job) in unit.iter().enumerate() {
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        let point = &plan.points[job.point];
                        let row = match done.get(&(point.hash.clone(), job.seed)) {
                            Some(r) => {
                                counts.lock().expect("not poisoned").1 += 1;
                                relabel(r, point)
                            }
                            None => {
                                let run_options =
                                    RunOptions { seed: Some(job.seed), keep_history: plan.spec.timeline.is_some(), ..Default::default() };
                                // A panic is a bug in one run: it becomes that run's row (and the
                                // panic hook has printed its replay command) and the sweep goes on.
                                let outcome =
                                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run::run(&point.scenario, &run_options)));
                                let outcome = match outcome {
                                    Ok(r) => r.map(|report| row_of(plan, point, job.seed, &report)),
                                    Err(payload) => Ok(panic_row(plan, point, job.seed, &panic_message(payload.as_ref()))),
                                };
                                match outcome {
                                    Ok(row) => {
                                        let line = row.to_json().to_string() + "\n";
                                        if let Err(e) = journal.lock().expect("not poisoned").write_all(line.as_bytes()) {
                                            first_error
                                                .lock()
                                                .expect("not poisoned")
                                                .get_or_insert(format!("cannot append to the journal: {e}"));
                                            stop.store(true, Ordering::Relaxed);
                                        }
                                        counts.lock().expect("not poisoned").0 += 1;
                                        // The row as the journal holds it: serde_json's float
                                        // parsing can be one ulp off the printed value, so a
                                        // row read back (resumption, `merge`) must equal the
                                        // row a fresh run keeps, or outputs would differ.
                                        journal_row(&line)
                                    }
                                    Err(e) => {
                                        first_error.lock().expect("not poisoned").get_or_insert(plan.run_error(point, &e).to_string());
                                        stop.store(true, Ordering::Relaxed);
                                        return;
                                    }
                                }
                            }
                        };
                        let beyond = plan.spec.until.as_ref().is_some_and(|u| row.metric(&u.metric).is_some_and(|x| x > u.above));
                        results.lock().expect("not poisoned").push(row);
                        if beyond {
                            progress.lock().expect("not poisoned").advance((unit.len() - idx) as u64);
                            break;
                        }
                        progress.lock().expect("not poisoned").advance(1);
                    }
                }
            });
        }
    });
    progress.lock().expect("not poisoned").finish();
    if let Some(e) = first_error.into_inner().expect("not poisoned") {
        return Err(e);
    }
    let mut rows = results.into_inner().expect("not poisoned");
    rows.sort_by_key(|r| (r.point, r.seed));
    let (ran, skipped) = counts.into_inner().expect("not poisoned");
    let aggregate = write_results(&options.out_dir, &plan.spec.name, &rows)?;
    crate::sweep_dir::mark_shard(&options.out_dir, &plan.spec.name, shard, true)?;
    Ok(SweepOutcome { rows, aggregate, ran, skipped, wall_s: started.elapsed().as_secs_f64() })
}

/// Joins the journals of shard outputs (directories or `runs.jsonl` files) into one result.
/// Two rows for the same point and seed must agree. The inputs must be every shard of one
/// sweep, each finished (see `sweep_dir::missing_shards`), unless `allow_partial`; then what is
/// missing is returned with the rows.
pub fn merge(inputs: &[PathBuf], out_dir: &Path, allow_partial: bool) -> Result<(Vec<Row>, Vec<String>), String> {
    let missing = crate::sweep_dir::missing_shards(inputs);
    if !missing.is_empty() && !allow_partial {
        return Err(format!("not a complete set of shards: {}; give --allow-partial to merge them anyway", missing.join("; ")));
    }
    let mut by_key: BTreeMap<(usize, u64), Row> = BTreeMap::new();
    let mut name: Option<String> = None;
    for input in inputs {
        let path = if input.is_dir() { input.join(JOURNAL) } else { input.clone() };
        if !path.exists() {
            return Err(format!("{}: no such journal", path.display()));
        }
        for r in read_journal(&path)? {
            match &name {
                None => name = Some(r.sweep.clone()),
                Some(n) if *n != r.sweep => {
                    return Err(format!("{}: rows of sweep {:?} cannot be merged with sweep {n:?}", path.display(), r.sweep));
                }
                Some(_) => {}
            }
            match by_key.get(&(r.point, r.seed)) {
                Some(old) if old != &r => {
                    return Err(format!("{}: point {} seed {} disagrees with another input", path.display(), r.point, r.seed));
                }
                Some(_) => {}
                None => {
                    by_key.insert((r.point, r.seed), r);
                }
            }
        }
    }
    let rows: Vec<Row> = by_key.into_values().collect();
    let name = name.unwrap_or_default();
    crate::sweep_dir::check(out_dir)?;
    std::fs::create_dir_all(out_dir).map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let _lock = crate::sweep_dir::Lock::take(out_dir)?;
    let mut journal = String::new();
    for r in &rows {
        journal += &(r.to_json().to_string() + "\n");
    }
    crate::sweep_dir::write(&out_dir.join(JOURNAL), journal)?;
    write_results(out_dir, &name, &rows)?;
    Ok((rows, missing))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_path_creates_objects_and_indexes_arrays() {
        let mut v = json!({"a": {"b": [1, {"c": 2}]}});
        set_path(&mut v, "a.b[1].c", json!(5)).unwrap();
        set_path(&mut v, "a.x.y", json!("z")).unwrap();
        assert_eq!(v, json!({"a": {"b": [1, {"c": 5}], "x": {"y": "z"}}}));
        assert!(set_path(&mut v, "a.b[7]", json!(0)).unwrap_err().contains("out of range"));
        assert!(set_path(&mut v, "a.b.c", json!(0)).is_err());
    }

    #[test]
    fn confidence_intervals_use_student_t() {
        let (m, c) = mean_ci(&[1.0, 2.0, 3.0]);
        assert_eq!(m, 2.0);
        assert!((c - 4.303 * (1.0f64 / 3.0).sqrt()).abs() < 1e-9);
        assert_eq!(mean_ci(&[4.0]), (4.0, 0.0));
    }

    #[test]
    fn journal_rows_read_back_identically() {
        let mut metrics = BTreeMap::new();
        for (i, x) in [198.21074921473766, 0.1 + 0.2, 1.0 / 3.0, 7.102231477, 1e-300, 123_456_789.123_456_79].into_iter().enumerate() {
            metrics.insert(format!("m{i}"), x);
        }
        let row = Row {
            sweep: "s".into(),
            point: 3,
            series: Some("a".into()),
            protocol: <causim_models::register::Register as causim_models::Model>::ENTRY.name.into(),
            params: BTreeMap::from([("p".to_string(), json!(1.25))]),
            seed: 7,
            scenario_hash: "h".into(),
            passed: true,
            invariant_violation: None,
            anomalies: BTreeMap::new(),
            metrics,
            error: None,
        };
        let once = journal_row(&row.to_json().to_string());
        // What a resumption or a merge reads is what a fresh run kept, and printing it again
        // gives the same line.
        assert_eq!(journal_row(&once.to_json().to_string()), once);
        assert_eq!(once.to_json().to_string(), journal_row(&once.to_json().to_string()).to_json().to_string());
        assert!(!row.to_json().to_string().contains("\"error\""), "a row without an error keeps the journal's old shape");
        // A run that panicked is journalled with its message, and reads back as a failed run.
        let failed = Row { passed: false, metrics: BTreeMap::new(), error: Some("panic (a bug in causim): boom".into()), ..row };
        assert_eq!(journal_row(&failed.to_json().to_string()), failed);
        assert_eq!(panic_message(&"boom"), "boom");
        assert_eq!(panic_message(&String::from("boom")), "boom");
    }

    #[test]
    fn a_timeline_buckets_operations_by_invocation_time_and_kind() {
        let history = concat!(
            "{\"format\":\"causim-history/2\"}\n",
            "{\"kind\":\"write\",\"invoke_ns\":1000,\"complete_ns\":3000}\n",
            "{\"kind\":\"write\",\"invoke_ns\":9000,\"complete_ns\":12000000}\n",
            "{\"kind\":\"read\",\"invoke_ns\":9500,\"complete_ns\":9600}\n",
            "{\"kind\":\"read\",\"invoke_ns\":20000,\"complete_ns\":20100}\n",
        );
        let m = timeline_metrics(&Timeline { bucket_ns: 5000, until_ns: 20000 }, history.as_bytes());
        assert_eq!(m[&timeline_key("write", 0, "count")], 1.0);
        assert_eq!(m[&timeline_key("write", 5000, "p99_ms")], 11.991, "the 9 µs start is in the second interval");
        assert_eq!(m[&timeline_key("read", 5000, "p50_ms")], 0.0001);
        assert!(!m.keys().any(|k| k.starts_with("timeline.read.20000")), "operations from until_ns on are left out");
        assert_eq!(m.len(), 9, "p50, p99 and count for each of three (kind, interval) pairs: {m:?}");
    }

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }
}
