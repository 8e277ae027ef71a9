//! A replayed counterexample on the diagram. A scenario with a `replay` schedule (what
//! `causim model-check` writes for a violated property) delivers messages in the model
//! checker's order; the page numbers those steps on the arrows that made them, and lists the
//! counterexample's steps in words beside the diagram.
//!
//! The words come from `counterexample.json` (written by `causim model-check` next to the
//! replay's run files): the property, and each step, a session's choice or a delivery tied to
//! its place in the schedule. Without that file the schedule itself is listed (`c1/f0 → S0:
//! ClientWrite`), so a hand-written replay scenario is numbered too.
//!
//! Step k of the schedule delivers the oldest message waiting on its link (see
//! `causim_sim::config::ReplayConfig`); here it is tied to the first delivered message on that
//! link, of that kind, not tied to an earlier step and delivered no earlier than the previous
//! step's message.

use super::ViewError;
use super::trace::{Endpoint, Fate, Trace};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// One delivery of the schedule.
struct Delivery {
    from: String,
    to: String,
    kind: Option<String>,
}

/// `{"property": …, "steps": [[text, msg]]}` (msg: an index into the trace's messages, or -1
/// for a step that delivered nothing), or null when the run has no replay schedule and the
/// directory no `counterexample.json`.
pub fn model(resolved: Option<&Value>, file: Option<(&Path, &Value)>, trace: &Trace) -> Result<Value, ViewError> {
    let schedule = schedule(resolved);
    if schedule.is_empty() && file.is_none() {
        return Ok(Value::Null);
    }
    let messages = tie(&schedule, trace);
    let (property, steps) = match file {
        Some((path, value)) => {
            let steps = read_steps(path, value, schedule.len())?;
            let rows = steps.into_iter().map(|(text, d)| json!([text, d.map_or(-1, |d| messages[d])])).collect();
            (value.get("property").cloned().unwrap_or(Value::Null), rows)
        }
        None => {
            let rows = schedule
                .iter()
                .zip(&messages)
                .map(|(d, &m)| json!([format!("{} → {}: {}", d.from, d.to, d.kind.as_deref().unwrap_or("a message")), m]))
                .collect();
            (Value::Null, rows)
        }
    };
    Ok(json!({"property": property, "steps": Value::Array(steps)}))
}

/// The resolved scenario's `replay.deliveries` (empty without one).
fn schedule(resolved: Option<&Value>) -> Vec<Delivery> {
    let Some(list) = resolved.and_then(|r| r.get("replay")).and_then(|r| r.get("deliveries")).and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .map(|d| Delivery {
            from: d["from"].as_str().unwrap_or_default().to_string(),
            to: d["to"].as_str().unwrap_or_default().to_string(),
            kind: d["msg"].as_str().map(str::to_string),
        })
        .collect()
}

/// The message each delivery of the schedule made (index into `trace.messages`, or -1).
fn tie(schedule: &[Delivery], trace: &Trace) -> Vec<i64> {
    let mut by_name: BTreeMap<&str, Endpoint> = BTreeMap::new();
    for (i, n) in trace.nodes.iter().enumerate() {
        by_name.insert(n, Endpoint::Node(i));
    }
    for (i, f) in trace.functions.iter().enumerate() {
        by_name.insert(&f.name, Endpoint::Function(i));
    }
    // Delivered messages per link, in delivery order.
    let mut delivered: BTreeMap<(Endpoint, Endpoint), Vec<usize>> = BTreeMap::new();
    for (i, m) in trace.messages.iter().enumerate() {
        if m.fate == Fate::Delivered {
            delivered.entry((m.from, m.to)).or_default().push(i);
        }
    }
    for list in delivered.values_mut() {
        list.sort_by_key(|&i| (trace.messages[i].end_ns, i));
    }
    let mut used = vec![false; trace.messages.len()];
    let mut last_ns = 0;
    schedule
        .iter()
        .map(|d| {
            let link = by_name.get(d.from.as_str()).zip(by_name.get(d.to.as_str()));
            let found = link.and_then(|(&a, &b)| delivered.get(&(a, b))).and_then(|list| {
                list.iter().copied().find(|&i| {
                    let m = &trace.messages[i];
                    !used[i] && m.end_ns >= last_ns && d.kind.as_deref().is_none_or(|k| k == m.kind)
                })
            });
            match found {
                Some(i) => {
                    used[i] = true;
                    last_ns = trace.messages[i].end_ns;
                    i as i64
                }
                None => -1,
            }
        })
        .collect()
}

/// `counterexample.json`'s steps: each one's text and, for a delivery, its place in the
/// schedule.
fn read_steps(path: &Path, value: &Value, deliveries: usize) -> Result<Vec<(String, Option<usize>)>, ViewError> {
    let bad = |field: &str, what: &str| ViewError(format!("{}: field `{field}`: {what}", path.display()));
    match value.get("format").and_then(Value::as_str) {
        Some("causim-counterexample/1") => {}
        _ => return Err(bad("format", "expected \"causim-counterexample/1\"")),
    }
    if value.get("property").is_some_and(|p| !p.is_string()) {
        return Err(bad("property", "not a string"));
    }
    let steps = value.get("steps").and_then(Value::as_array).ok_or_else(|| bad("steps", "missing or not an array"))?;
    steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let text = s.get("step").and_then(Value::as_str).ok_or_else(|| bad(&format!("steps[{i}].step"), "missing or not a string"))?;
            let delivery = match s.get("delivery") {
                None => None,
                Some(d) => match d.as_u64() {
                    Some(d) if (d as usize) < deliveries => Some(d as usize),
                    _ => {
                        let what = match deliveries {
                            0 => "the run has no replay schedule (summary.json's `replay.deliveries`)".to_string(),
                            n => format!("not one of the run's {n} replay deliveries (0 to {})", n - 1),
                        };
                        return Err(bad(&format!("steps[{i}].delivery"), &what));
                    }
                },
            };
            Ok((text.to_string(), delivery))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::trace;

    fn replayed() -> Trace {
        trace::read(concat!(
            "{\"t\":0,\"ev\":\"start\",\"node\":\"S0\"}\n",
            "{\"t\":0,\"ev\":\"place\",\"fn\":\"c1/f0\",\"machine\":\"S0\"}\n",
            "{\"t\":0,\"ev\":\"wait\",\"from\":\"c1/f0\",\"to\":\"S0\",\"msg\":\"ClientWrite\"}\n",
            "{\"t\":1000,\"ev\":\"deliver\",\"from\":\"c1/f0\",\"to\":\"S0\",\"msg\":\"ClientWrite\",\"detail\":\"w\"}\n",
            "{\"t\":1000,\"ev\":\"wait\",\"from\":\"S0\",\"to\":\"c1/f0\",\"msg\":\"WriteReply\"}\n",
            "{\"t\":2000,\"ev\":\"deliver\",\"from\":\"S0\",\"to\":\"c1/f0\",\"msg\":\"WriteReply\",\"detail\":\"r\"}\n",
        ))
        .unwrap()
    }

    fn resolved() -> Value {
        json!({"replay": {"deliveries": [
            {"from": "c1/f0", "to": "S0", "msg": "ClientWrite"},
            {"from": "S0", "to": "c1/f0", "msg": "WriteReply"},
            {"from": "S0", "to": "S1", "msg": "ServerWrite"},
        ]}})
    }

    /// Goal: each delivery of the schedule is tied to the arrow that made it; a step the trace
    /// does not show is -1, not another message.
    #[test]
    fn schedule_steps_are_tied_to_their_messages() {
        let m = model(Some(&resolved()), None, &replayed()).unwrap();
        assert_eq!(m["steps"], json!([["c1/f0 → S0: ClientWrite", 0], ["S0 → c1/f0: WriteReply", 1], ["S0 → S1: ServerWrite", -1]]));
        assert!(m["property"].is_null());
        assert!(model(None, None, &replayed()).unwrap().is_null(), "no schedule, no counterexample");
    }

    /// Goal: the model checker's words replace the schedule's, choices included; a delivery
    /// index outside the schedule is an error naming the file and the field.
    #[test]
    fn the_model_checkers_steps_name_the_property_and_the_choices() {
        let file = json!({"format": "causim-counterexample/1", "property": "p", "steps": [
            {"step": "c1 picks w(k1)@S0"}, {"step": "c1/f0 → S0: ClientWrite k1=1", "delivery": 0},
        ]});
        let path = Path::new("run/counterexample.json");
        let m = model(Some(&resolved()), Some((path, &file)), &replayed()).unwrap();
        assert_eq!(m, json!({"property": "p", "steps": [["c1 picks w(k1)@S0", -1], ["c1/f0 → S0: ClientWrite k1=1", 0]]}));

        let bad = json!({"format": "causim-counterexample/1", "steps": [{"step": "x", "delivery": 3}]});
        let e = model(Some(&resolved()), Some((path, &bad)), &replayed()).unwrap_err();
        assert_eq!(e.0, "run/counterexample.json: field `steps[0].delivery`: not one of the run's 3 replay deliveries (0 to 2)");
        let e = model(None, Some((path, &json!({"steps": []}))), &replayed()).unwrap_err();
        assert!(e.0.contains("field `format`"), "{}", e.0);
    }
}
