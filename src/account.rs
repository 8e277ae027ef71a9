//! A readable, step-by-step account of a run, rendered from its trace and history: who
//! started where, which message reached whom, what each protocol step did, and what each
//! client observed.

use causim_sim::time::format_duration;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Renders the account. `trace` and `history` are the run's JSON Lines files.
pub fn render(trace: &str, history: &str) -> String {
    let records: BTreeMap<u64, String> = history
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("id").is_some())
        .map(|v| (v["id"].as_u64().unwrap_or(0), describe_record(&v)))
        .collect();
    let mut out = String::new();
    for line in trace.lines() {
        let Ok(e) = serde_json::from_str::<Value>(line) else { continue };
        let t = e["t"].as_u64().unwrap_or(0);
        let s = |k: &str| e[k].as_str().unwrap_or("?").to_string();
        let text = match e["ev"].as_str().unwrap_or("") {
            "place" => format!("{} starts on {}", s("fn"), s("machine")),
            "deliver" => format!("{} → {}  {}", s("from"), s("to"), short(&s("detail"))),
            "action" => format!("{}: {} {}", s("node"), s("action"), e["args"]),
            "record" => match records.get(&e["id"].as_u64().unwrap_or(u64::MAX)) {
                Some(r) => format!("history #{}: {r}", e["id"]),
                None => continue,
            },
            "done" => format!("{} finishes", s("fn")),
            "abort" => {
                format!("workflow {} aborts ({}){}", s("session"), s("reason"), if e["retry"] == true { ", will retry" } else { "" })
            }
            "workflow" => format!("workflow {} completes", s("session")),
            "drop" => format!("{} → {} {} lost ({})", s("from"), s("to"), s("msg"), s("reason")),
            "hold" => format!("{} → {} {} held by a partition", s("from"), s("to"), s("msg")),
            "release" => format!("{} → {} {} released", s("from"), s("to"), s("msg")),
            "crash" => format!("{} crashes", s("node")),
            "restart" => format!("{} restarts", s("node")),
            "partition" => format!("partition {} starts", e["index"]),
            "heal" => format!("partition {} heals", e["index"]),
            "invariant" => format!("INVARIANT VIOLATED at {}: {}", s("node"), s("violation")),
            _ => continue,
        };
        let _ = writeln!(out, "{:>12}  {text}", format_duration(t));
    }
    out
}

/// `c2 reads y=1, x=⊥ at S1 (ok)`.
fn describe_record(v: &Value) -> String {
    let ops: Vec<String> = v["ops"]
        .as_array()
        .map(|ops| {
            ops.iter()
                .map(|o| {
                    let value = match &o["value"] {
                        Value::Null => "⊥".to_string(),
                        other => other.to_string(),
                    };
                    let key = o["key"].as_str().map(str::to_string).unwrap_or_else(|| o["key"].to_string());
                    let verb = if o["f"] == "w" { "writes" } else { "reads" };
                    format!("{verb} {key}={value}")
                })
                .collect()
        })
        .unwrap_or_default();
    let node = v["node"].as_str().map(|n| format!(" at {n}")).unwrap_or_default();
    format!("{} {}{node} ({})", v["session"].as_str().unwrap_or("?"), ops.join(", "), v["outcome"].as_str().unwrap_or("ok"))
}

/// Message details can be long; keep the first 160 characters.
fn short(detail: &str) -> String {
    if detail.chars().count() <= 160 {
        return detail.to_string();
    }
    let cut: String = detail.chars().take(157).collect();
    format!("{cut}...")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_deliveries_actions_and_observations() {
        let trace = r#"{"t":0,"ev":"place","fn":"c1/f0","machine":"S0"}
{"t":5000,"ev":"deliver","from":"c1/f0","to":"S0","msg":"ClientWrite","detail":"ClientWrite { key: 0 }"}
{"t":5000,"ev":"action","node":"S0","action":"ClientWrite","args":{"vc":"[1,0]"}}
{"t":10000,"ev":"record","id":0,"fn":"c1/f0"}"#;
        let history = r#"{"format":"causim-history/1"}
{"id":0,"session":"c1","node":"S0","outcome":"ok","ops":[{"f":"w","key":"x","value":1}]}"#;
        let text = render(trace, history);
        let expected: String = [
            ("0ns", "c1/f0 starts on S0"),
            ("5.00us", "c1/f0 → S0  ClientWrite { key: 0 }"),
            ("5.00us", "S0: ClientWrite {\"vc\":\"[1,0]\"}"),
            ("10.00us", "history #0: c1 writes x=1 at S0 (ok)"),
        ]
        .iter()
        .map(|(t, line)| format!("{t:>12}  {line}\n"))
        .collect();
        assert_eq!(text, expected);
    }
}
