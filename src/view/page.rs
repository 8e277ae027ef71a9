//! Assembles the page: the HTML skeleton with the style sheet, the script and the run's data
//! inlined, so the file needs nothing else.

use serde_json::Value;

const SKELETON: &str = include_str!("assets/page.html");
const STYLE: &str = include_str!("assets/view.css");
const SCRIPT: &str = include_str!("assets/view.js");

/// The page for `model` (the value [`super::data::model`] builds).
pub fn render(model: &Value) -> String {
    let title = format!("causim view: {}", model["run"]["name"].as_str().unwrap_or("run"));
    let data = script_safe_json(model);
    let mut out = String::with_capacity(SKELETON.len() + STYLE.len() + SCRIPT.len() + data.len());
    let mut rest = SKELETON;
    // One pass over the skeleton's `{{slot}}`s, so text inserted into one slot is never taken
    // for another.
    while let Some(open) = rest.find("{{") {
        let close = open + rest[open..].find("}}").expect("the skeleton's slots are closed");
        out.push_str(&rest[..open]);
        match &rest[open + 2..close] {
            "title" => out.push_str(&html_escape(&title)),
            "style" => out.push_str(STYLE),
            "script" => out.push_str(SCRIPT),
            "data" => out.push_str(&data),
            other => panic!("unknown slot {{{{{other}}}}} in page.html"),
        }
        rest = &rest[close + 2..];
    }
    out.push_str(rest);
    out
}

/// JSON that can sit inside `<script type="application/json">`: every `<` is written as
/// `\u003c`, so no `</script>` or `<!--` in a string can end or bend the element.
fn script_safe_json(v: &Value) -> String {
    serde_json::to_string(v).expect("values serialize").replace('<', "\\u003c")
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Goal: a history value that looks like markup cannot end the data element early.
    #[test]
    fn data_with_markup_stays_inside_its_script_element() {
        let model = serde_json::json!({"run": {"name": "<b>"}, "records": ["</script><script>alert(1)</script>"]});
        let html = render(&model);
        assert!(!html.contains("</script><script>alert"));
        assert!(html.contains("<title>causim view: &lt;b&gt;</title>"));
        let start = html.find("id=\"causim-data\">").unwrap() + "id=\"causim-data\">".len();
        let end = start + html[start..].find("</script>").unwrap();
        let back: Value = serde_json::from_str(&html[start..end]).unwrap();
        assert_eq!(back, model);
    }

    #[test]
    fn the_page_fetches_nothing() {
        let html = render(&serde_json::json!({"run": {}}));
        for needle in ["src=\"http", "href=\"http", "src=\"//", "url(http", "@import", "fetch(", "XMLHttpRequest", "import("] {
            assert!(!html.contains(needle), "the page refers to {needle}");
        }
    }
}
